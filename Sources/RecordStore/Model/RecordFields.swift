/// A record's fields: a few named values, kept as a small array in the order they were first set.
///
/// A record holds a handful of fields, so a lookup compares names one by one instead of hashing
/// them (field names are short, and two equal short strings compare in one step). Two sets are
/// equal when they hold the same names with the same values in any order, as dictionaries are;
/// the order is never part of a wire or disk format (the JSON writer and the journal sort names).
/// A remote may send a record with many thousands of fields: whatever would compare every field
/// with every other (building from a sequence, merging, equality) goes through a temporary index
/// past `indexThreshold` fields, so nothing is quadratic in a hostile record.
public struct RecordFields: Sendable, Sequence, ExpressibleByDictionaryLiteral {
    public typealias Element = (key: String, value: FieldValue)

    private var entries: [Element]

    /// Past this many fields, bulk operations index the names instead of scanning for each one.
    static let indexThreshold = 16

    public init() { entries = [] }

    /// Fields from a literal. Naming a field twice in a literal is a programmer's mistake, as it is
    /// in a dictionary literal: debug builds stop on it; release builds take the names as given
    /// (comparing every name with every other cost more than the rest of building a record).
    public init(dictionaryLiteral elements: (String, FieldValue)...) {
        assert(Set(elements.map(\.0)).count == elements.count, "a field named twice in a literal")
        self.init(unique: elements.map { (key: $0.0, value: $0.1) })
    }

    private init(unique entries: [Element]) { self.entries = entries }

    /// Fields from name-value pairs in order; a name given twice keeps its last value.
    public init<S: Sequence>(_ pairs: S) where S.Element == (String, FieldValue) {
        entries = []
        entries.reserveCapacity(pairs.underestimatedCount)
        var index: [String: Int]?
        for (name, value) in pairs {
            if index == nil, entries.count >= Self.indexThreshold {
                index = Dictionary(entries.indices.map { (entries[$0].key, $0) }, uniquingKeysWith: { a, _ in a })
            }
            if index != nil {
                if let at = index![name] {
                    entries[at].value = value
                } else {
                    index![name] = entries.count
                    entries.append((name, value))
                }
            } else {
                self[name] = value
            }
        }
    }

    /// The fields of a dictionary (whose names are unique already).
    public init(_ dictionary: [String: FieldValue]) {
        entries = dictionary.map { ($0.key, $0.value) }
    }

    public var count: Int { entries.count }
    public var isEmpty: Bool { entries.isEmpty }
    /// The field names, in the order they were first set.
    public var keys: [String] { entries.map(\.key) }

    /// The value named `name`; setting nil removes the field, setting a new name appends it.
    public subscript(name: String) -> FieldValue? {
        get {
            for entry in entries where entry.key == name { return entry.value }
            return nil
        }
        set {
            if let at = entries.firstIndex(where: { $0.key == name }) {
                if let newValue { entries[at].value = newValue } else { entries.remove(at: at) }
            } else if let newValue {
                entries.append((name, newValue))
            }
        }
    }

    public func makeIterator() -> IndexingIterator<[Element]> { entries.makeIterator() }
    public var underestimatedCount: Int { entries.count }

    /// These fields with `other`'s set over them: `other`'s value wins where both hold a name.
    public func merging(_ other: RecordFields) -> RecordFields {
        var merged = self
        if entries.count + other.count <= Self.indexThreshold {
            for (name, value) in other.entries { merged[name] = value }
            return merged
        }
        var index = merged.nameIndex()
        for (name, value) in other.entries {
            if let at = index[name] {
                merged.entries[at].value = value
            } else {
                index[name] = merged.entries.count
                merged.entries.append((name, value))
            }
        }
        return merged
    }

    /// Whether every name of `filters` is here with an equal value.
    public func holds(_ filters: [String: FieldValue]) -> Bool {
        if filters.count > Self.indexThreshold, entries.count > Self.indexThreshold {
            let index = nameIndex()
            return filters.allSatisfy { filter in index[filter.key].map { entries[$0].value == filter.value } == true }
        }
        return filters.allSatisfy { self[$0.key] == $0.value }
    }

    /// Each name's position (names are unique).
    private func nameIndex() -> [String: Int] {
        var index: [String: Int] = [:]
        index.reserveCapacity(entries.count)
        for (at, entry) in entries.enumerated() { index[entry.key] = at }
        return index
    }
}

extension RecordFields: Equatable {
    /// Same names with equal values, in any order.
    public static func == (a: RecordFields, b: RecordFields) -> Bool {
        guard a.entries.count == b.entries.count else { return false }
        if a.entries.count > indexThreshold {
            let index = b.nameIndex()
            return a.entries.allSatisfy { entry in index[entry.key].map { b.entries[$0].value == entry.value } == true }
        }
        return a.entries.allSatisfy { entry in b[entry.key] == entry.value }
    }
}

extension RecordFields: Hashable {
    /// Independent of the order: each field hashes alone and the results are combined with XOR,
    /// as `Dictionary` does (a shared order would cost a sort of the names).
    public func hash(into hasher: inout Hasher) {
        var combined = 0
        for entry in entries {
            var one = Hasher()
            one.combine(entry.key)
            one.combine(entry.value)
            combined ^= one.finalize()
        }
        hasher.combine(entries.count)
        hasher.combine(combined)
    }
}

extension RecordFields: CustomStringConvertible {
    /// As a dictionary prints, names in the order they were set.
    public var description: String {
        entries.isEmpty ? "[:]" : "[" + entries.map { "\($0.key.debugDescription): \($0.value)" }
            .joined(separator: ", ") + "]"
    }
}
