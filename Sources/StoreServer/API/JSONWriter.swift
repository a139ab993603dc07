import Foundation
import ZoneCore

/// Writes JSON from the values the wire format builds (dictionaries, arrays, strings, integers,
/// doubles, booleans), with sorted keys. Foundation's `JSONSerialization` spends about 60 µs on
/// a typical record response on Linux; this takes a few.
enum JSONWriter {
    static func serialize(_ value: Any) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(512)
        write(value, into: &out)
        return out
    }

    private static func write(_ value: Any, into out: inout [UInt8]) {
        // Strings and objects first: they are most of a record, and every case tried before the
        // matching one is a dynamic cast that fails.
        switch value {
        case let s as String: writeString(s, into: &out)
        case let o as [String: Any]:
            out.append(UInt8(ascii: "{"))
            // Sorted in a buffer on the stack where it fits (a record's dictionaries all do): `sorted`
            // took an array from the heap for every object, most of a change feed's allocations.
            withUnsafeTemporaryAllocation(of: (key: String, value: Any).self, capacity: o.count) { buffer in
                guard let base = buffer.baseAddress else { return }
                var count = 0
                for entry in o {
                    (base + count).initialize(to: entry)
                    count += 1
                }
                var entries = UnsafeMutableBufferPointer(start: base, count: count)
                defer { _ = entries.deinitialize() }
                entries.sort { $0.key < $1.key }
                for i in 0..<count {
                    if i > 0 { out.append(UInt8(ascii: ",")) }
                    writeString(entries[i].key, into: &out)
                    out.append(UInt8(ascii: ":"))
                    write(entries[i].value, into: &out)
                }
            }
            out.append(UInt8(ascii: "}"))
        case let a as [Any]:
            out.append(UInt8(ascii: "["))
            for (i, item) in a.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                write(item, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case let b as Bool: out.append(contentsOf: b ? "true".utf8 : "false".utf8)
        case let i as Int: out.append(contentsOf: String(i).utf8)
        case let i as Int64: out.append(contentsOf: String(i).utf8)
        case let i as UInt64: out.append(contentsOf: String(i).utf8)
        case let i as Int32: out.append(contentsOf: String(i).utf8)
        case let d as Double: writeDouble(d, into: &out)
        case let n as NSNumber:
            if WireFormat.isFloatingPoint(n) { writeDouble(n.doubleValue, into: &out) }
            else { out.append(contentsOf: n.stringValue.utf8) }
        case is NSNull:
            out.append(contentsOf: "null".utf8)
        default:
            writeString("\(value)", into: &out)
        }
    }

    private static func writeDouble(_ d: Double, into out: inout [UInt8]) {
        guard d.isFinite else { out.append(contentsOf: "null".utf8); return }
        // Integral values as integers (exact below 2^53); -0.0 keeps its sign. Otherwise Swift's
        // description: the shortest text that reads back as the same double.
        if d == d.rounded(), abs(d) < 1e15, !(d == 0 && d.sign == .minus) {
            out.append(contentsOf: String(Int64(d)).utf8)
            return
        }
        out.append(contentsOf: "\(d)".utf8)
    }

    private static func writeString(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // Most strings need no escape: copied whole.
        if !s.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            out.append(contentsOf: s.utf8)
            out.append(UInt8(ascii: "\""))
            return
        }
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "\""): out.append(contentsOf: [92, 34])
            case UInt8(ascii: "\\"): out.append(contentsOf: [92, 92])
            case 10: out.append(contentsOf: [92, UInt8(ascii: "n")])
            case 13: out.append(contentsOf: [92, UInt8(ascii: "r")])
            case 9: out.append(contentsOf: [92, UInt8(ascii: "t")])
            case 0..<0x20:
                out.append(contentsOf: [92, UInt8(ascii: "u"), 48, 48, Hex.digit(b >> 4), Hex.digit(b)])
            default: out.append(b)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
