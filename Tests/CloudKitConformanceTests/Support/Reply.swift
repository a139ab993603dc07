// An HTTP answer of the store: its status and JSON body, with the shapes the reference describes.
import Foundation
import RecordStore
import StoreServer

struct Reply: Sendable, CustomStringConvertible {
    let status: Int
    /// The JSON object, re-serialized to stay `Sendable`; `body` reads it.
    private let bytes: [UInt8]

    init(status: Int, body: [UInt8]) throws {
        self.status = status
        bytes = body
        _ = try WireFormat.parseObject(body)
    }

    init(_ answer: (Int, WireFormat.Object)) throws {
        self.status = answer.0
        bytes = WireFormat.serialize(answer.1)
    }

    var body: [String: Any] { (try? WireFormat.parseObject(bytes)) ?? [:] }

    /// A request-level error's `serverErrorCode`.
    var code: String? { body["serverErrorCode"] as? String }
    var reason: String { body["reason"] as? String ?? "" }

    /// The `records` array of records/modify, lookup and query.
    var records: [[String: Any]] { body["records"] as? [[String: Any]] ?? [] }

    /// The `zones` array of changes/zone and changes/database.
    var zones: [[String: Any]] { body["zones"] as? [[String: Any]] ?? [] }

    /// Each record result's `serverErrorCode`, nil for a success.
    var recordCodes: [String?] { records.map { $0["serverErrorCode"] as? String } }

    var description: String { "\(status) \(String(decoding: bytes, as: UTF8.self))" }
}

extension Dictionary where Key == String, Value == Any {
    /// A field's value in a record dictionary.
    func field(_ name: String) -> Any? { ((self["fields"] as? [String: Any])?[name] as? [String: Any])?["value"] }
    /// A field's integer value in a record dictionary.
    func int(_ name: String) -> Int64? { integer(field(name)) }
    /// A field's type in a record dictionary.
    func fieldType(_ name: String) -> String? {
        ((self["fields"] as? [String: Any])?[name] as? [String: Any])?["type"] as? String
    }
    /// The names of a record dictionary's fields, sorted.
    var fieldNames: [String] { ((self["fields"] as? [String: Any])?.keys).map { $0.sorted() } ?? [] }
    var tag: String? { self["recordChangeTag"] as? String }
    var code: String? { self["serverErrorCode"] as? String }
}

/// An integer of a JSON answer (NSNumber or Int64).
func integer(_ any: Any?) -> Int64? {
    if let n = any as? NSNumber { return n.int64Value }
    return any as? Int64
}
