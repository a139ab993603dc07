import Foundation
import RecordStore

/// A record in a response, written by `JSONWriter` straight from the record: the bytes of
/// `WireFormat.encode(record, rendering)` written with sorted keys, without building the seven or so
/// dictionaries of that encoding (record, zone ID, fields, each field, the stamps), which were most
/// of a change feed's time. A record with a field of another type than STRING, INT64, DOUBLE,
/// TIMESTAMP or BYTES, and a share, is encoded as a dictionary when this is made (their encodings
/// read the request's scope: asset URLs, the share's participant), and that is written.
/// `RecordJSONTests` holds the two ways to the same bytes.
struct RecordJSON {
    let record: Record
    let rendering: RecordRendering
    /// The dictionary to write instead, for a record this does not write itself.
    private let encoded: WireFormat.Object?

    init(_ record: Record, _ rendering: RecordRendering) {
        self.record = record
        self.rendering = rendering
        let plain = record.recordType != RecordShare.recordType && record.fields.allSatisfy { Self.isPlain($0.value) }
        encoded = plain ? nil : WireFormat.encode(record, rendering)
    }

    private static func isPlain(_ v: FieldValue) -> Bool {
        switch v {
        case .string, .int64, .double, .timestamp, .bytes: true
        default: false
        }
    }

    func write(into out: inout [UInt8]) {
        if let encoded {
            JSONWriter.writeObject(encoded, into: &out)
            return
        }
        // The keys of `WireFormat.encode(_:_:)` in sorted order: created, fields, modified, parent,
        // recordChangeTag, recordName, recordType, share, shortGUID, zoneID.
        out.append(UInt8(ascii: "{"))
        if let c = record.created {
            Self.append(#""created":"#, &out)
            Self.write(c, into: &out)
            out.append(UInt8(ascii: ","))
        }
        Self.append(#""fields":"#, &out)
        writeFields(into: &out)
        if let m = record.modified {
            Self.append(#","modified":"#, &out)
            Self.write(m, into: &out)
        }
        if let p = record.parent {
            Self.append(#","parent":"#, &out)
            Self.writeRecordName(p, into: &out)
        }
        if let tag = record.recordChangeTag {
            Self.append(#","recordChangeTag":"#, &out)
            JSONWriter.writeString(tag, into: &out)
        }
        Self.append(#","recordName":"#, &out)
        JSONWriter.writeString(record.id.recordName, into: &out)
        Self.append(#","recordType":"#, &out)
        JSONWriter.writeString(record.recordType, into: &out)
        if let s = record.share {
            Self.append(#","share":"#, &out)
            Self.writeRecordName(s, into: &out)
        }
        if let guid = record.shortGUID {
            Self.append(#","shortGUID":"#, &out)
            JSONWriter.writeString(guid, into: &out)
        }
        Self.append(#","zoneID":"#, &out)
        // Zone ID Dictionary: ownerRecordName, zoneName.
        out.append(contentsOf: #"{"ownerRecordName":"#.utf8)
        JSONWriter.writeString(record.id.zoneID.ownerName, into: &out)
        out.append(contentsOf: #","zoneName":"#.utf8)
        JSONWriter.writeString(record.id.zoneID.zoneName, into: &out)
        out.append(contentsOf: "}}".utf8)
    }

    /// A fixed fragment (a key with its quotes and colon, and the comma before it), in one append.
    private static func append(_ fragment: StaticString, _ out: inout [UInt8]) {
        out.append(contentsOf: UnsafeBufferPointer(start: fragment.utf8Start, count: fragment.utf8CodeUnitCount))
    }

    private static func writeRecordName(_ name: String, into out: inout [UInt8]) {
        out.append(contentsOf: #"{"recordName":"#.utf8)
        JSONWriter.writeString(name, into: &out)
        out.append(UInt8(ascii: "}"))
    }

    /// A stamp's keys in order: deviceID, timestamp, userRecordName.
    private static func write(_ stamp: RecordStamp, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "{"))
        if let d = stamp.deviceID {
            out.append(contentsOf: #""deviceID":"#.utf8)
            JSONWriter.writeString(d, into: &out)
            out.append(UInt8(ascii: ","))
        }
        out.append(contentsOf: #""timestamp":"#.utf8)
        JSONWriter.writeInteger(stamp.timestamp, into: &out)
        out.append(contentsOf: #","userRecordName":"#.utf8)
        JSONWriter.writeString(stamp.userRecordName, into: &out)
        out.append(UInt8(ascii: "}"))
    }

    /// The fields `desiredKeys` asks for, by name; a name held twice written once, with its last
    /// value (as the dictionary of the encoding keeps it).
    private func writeFields(into out: inout [UInt8]) {
        out.append(UInt8(ascii: "{"))
        let fields = record.fields
        let desired = rendering.desiredKeys
        withUnsafeTemporaryAllocation(of: (key: String, value: FieldValue).self, capacity: fields.count) { buffer in
            guard let base = buffer.baseAddress else { return }
            var count = 0
            for field in fields where desired?.contains(field.key) ?? true {
                (base + count).initialize(to: field)
                count += 1
            }
            defer { base.deinitialize(count: count) }
            withUnsafeTemporaryAllocation(of: Int.self, capacity: count) { order in
                guard let order = order.baseAddress else { return }
                // Positions sorted by name, then by position: of a name held twice the last comes last.
                for j in 0..<count { (order + j).initialize(to: j) }
                JSONWriter.sort(order, count: count) { a, b in
                    base[a].key < base[b].key || (base[a].key == base[b].key && a < b)
                }
                var first = true
                for j in 0..<count {
                    let field = base[order[j]]
                    if j + 1 < count && base[order[j + 1]].key == field.key { continue }
                    if !first { out.append(UInt8(ascii: ",")) }
                    first = false
                    JSONWriter.writeString(field.key, into: &out)
                    out.append(UInt8(ascii: ":"))
                    writeField(field.value, into: &out)
                }
            }
        }
        out.append(UInt8(ascii: "}"))
    }

    /// Record Field Dictionary: type, value (`WireFormat.encodeField`).
    private func writeField(_ v: FieldValue, into out: inout [UInt8]) {
        out.append(contentsOf: #"{"type":"#.utf8)
        JSONWriter.writeString(v.typeName, into: &out)
        out.append(contentsOf: #","value":"#.utf8)
        let asStrings = rendering.numbersAsStrings
        switch v {
        case .string(let s):
            JSONWriter.writeString(s, into: &out)
        case .int64(let i), .timestamp(let i):
            if asStrings { out.append(UInt8(ascii: "\"")) }
            JSONWriter.writeInteger(i, into: &out)
            if asStrings { out.append(UInt8(ascii: "\"")) }
        case .double(let d):
            if asStrings { JSONWriter.writeString("\(d)", into: &out) } else { JSONWriter.writeDouble(d, into: &out) }
        case .bytes(let b):
            JSONWriter.writeString(Data(b).base64EncodedString(), into: &out)
        default:
            // Not reached: such a record is written from its dictionary (`encoded`).
            JSONWriter.write(WireFormat.encodeField(v, numbersAsStrings: asStrings)["value"] ?? NSNull(), into: &out)
        }
        out.append(UInt8(ascii: "}"))
    }
}
