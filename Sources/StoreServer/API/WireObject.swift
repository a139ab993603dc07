import Foundation
import RecordStore

/// A JSON object of a request, read key by key: a key of the wrong JSON type is `BAD_REQUEST`
/// naming it (with where it sits, e.g. `operations[2].record.recordName`), and a key the reference
/// does not document for the dictionary is refused the same way instead of being ignored.
struct WireObject {
    let object: WireFormat.Object
    /// Where this object sits in the request, for messages ("" at the top).
    let path: String

    init(_ object: WireFormat.Object, path: String = "") {
        self.object = object
        self.path = path
    }

    /// `any` as an object at `path`, or a `ShapeError` saying what it should be.
    init(_ any: Any?, at path: String, what: String = "a dictionary") throws(WireFormat.ShapeError) {
        guard let object = any as? WireFormat.Object else {
            throw WireFormat.ShapeError("\(path) must be \(what)")
        }
        self.init(object, path: path)
    }

    /// The name of `key` here, for messages.
    func name(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    subscript(key: String) -> Any? {
        // JSON null is as good as absent for every optional key.
        guard let value = object[key], !WireFormat.isNull(value) else { return nil }
        return value
    }

    /// Refuses any key outside what the reference lists for this dictionary (and the keys a
    /// response carries in it, which a client may send back).
    func allowing(_ documented: DocumentedKeys) throws(WireFormat.ShapeError) {
        for key in object.keys where !documented.keys.contains(key) && !documented.responseOnly.contains(key) {
            throw WireFormat.ShapeError("\(name(key)): \(documented.dictionary) has no key '\(key)' (its keys: "
                                        + "\(documented.keys.sorted().joined(separator: ", ")))")
        }
    }

    func string(_ key: String) throws(WireFormat.ShapeError) -> String? {
        guard let value = self[key] else { return nil }
        guard let s = value as? String else { throw WireFormat.ShapeError("\(name(key)) must be a string") }
        return s
    }

    func requiredString(_ key: String) throws(WireFormat.ShapeError) -> String {
        guard let s = try string(key) else { throw WireFormat.ShapeError("\(name(key)) is required") }
        return s
    }

    func bool(_ key: String) throws(WireFormat.ShapeError) -> Bool? {
        guard let value = self[key] else { return nil }
        guard WireFormat.isBoolean(value), let b = value as? Bool else {
            throw WireFormat.ShapeError("\(name(key)) must be true or false")
        }
        return b
    }

    func array(_ key: String) throws(WireFormat.ShapeError) -> [Any]? {
        guard let value = self[key] else { return nil }
        guard let a = value as? [Any] else { throw WireFormat.ShapeError("\(name(key)) must be an array") }
        return a
    }

    func requiredArray(_ key: String) throws(WireFormat.ShapeError) -> [Any] {
        guard let a = try array(key) else { throw WireFormat.ShapeError("\(name(key)) is required") }
        return a
    }

    /// An array of strings (`desiredKeys`, `desiredRecordTypes`).
    func strings(_ key: String) throws(WireFormat.ShapeError) -> [String]? {
        guard let items = try array(key) else { return nil }
        var out: [String] = []
        out.reserveCapacity(items.count)
        for item in items {
            guard let s = item as? String else {
                throw WireFormat.ShapeError("\(name(key)) must be an array of strings")
            }
            out.append(s)
        }
        return out
    }

    /// A whole number of at least 1 (`resultsLimit`).
    func positiveInt(_ key: String) throws(WireFormat.ShapeError) -> Int? {
        guard let value = self[key] else { return nil }
        guard let n = WireFormat.int64(value), n >= 1 else {
            throw WireFormat.ShapeError("\(name(key)) must be a whole number of at least 1")
        }
        return Int(clamping: n)
    }

    func object(_ key: String, what: String = "a dictionary") throws(WireFormat.ShapeError) -> WireObject? {
        guard let value = self[key] else { return nil }
        return try WireObject(value, at: name(key), what: what)
    }

    /// The objects of the array under `key`, each with its place in the path.
    func objects(_ key: String, required: Bool = false) throws(WireFormat.ShapeError) -> [WireObject] {
        guard let items = required ? try requiredArray(key) : try array(key) else { return [] }
        var out: [WireObject] = []
        out.reserveCapacity(items.count)
        for (i, item) in items.enumerated() { out.append(try WireObject(item, at: "\(name(key))[\(i)]")) }
        return out
    }
}
