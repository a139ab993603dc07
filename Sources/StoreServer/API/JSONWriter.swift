import Foundation
import ZoneCore

/// Writes JSON from the values the wire format builds (dictionaries, arrays, strings, integers,
/// doubles, booleans, and records as `RecordJSON`), with sorted keys. Foundation's
/// `JSONSerialization` spends about 60 µs on a typical record response on Linux; this takes a few.
enum JSONWriter {
    static func serialize(_ value: Any) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(512)
        write(value, into: &out)
        return out
    }

    static func write(_ value: Any, into out: inout [UInt8]) {
        // The exact types the wire format builds are told apart by their metadata, one pointer
        // comparison each: a chain of `as?` casts ran the runtime's dynamic cast for every case tried
        // before the matching one, the largest cost of writing a change feed. Anything else (a
        // number the reader made, a dictionary literal of another value type) takes the casts.
        let type = Swift.type(of: value)
        if type == String.self {
            writeString(value as! String, into: &out)
        } else if type == [String: Any].self {
            writeObject(value as! [String: Any], into: &out)
        } else if type == RecordJSON.self {
            (value as! RecordJSON).write(into: &out)
        } else if type == [Any].self {
            writeArray(value as! [Any], into: &out)
        } else if type == Int64.self {
            writeInteger(value as! Int64, into: &out)
        } else if type == Int.self {
            writeInteger(Int64(value as! Int), into: &out)
        } else if type == Bool.self {
            out.append(contentsOf: value as! Bool ? "true".utf8 : "false".utf8)
        } else if type == Double.self {
            writeDouble(value as! Double, into: &out)
        } else {
            writeCast(value, into: &out)
        }
    }

    /// The values of no type `write` names, by what they cast to, in this order.
    private static func writeCast(_ value: Any, into out: inout [UInt8]) {
        switch value {
        case let s as String: writeString(s, into: &out)
        case let o as [String: Any]: writeObject(o, into: &out)
        case let a as [Any]: writeArray(a, into: &out)
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

    private static func writeArray(_ a: [Any], into out: inout [UInt8]) {
        out.append(UInt8(ascii: "["))
        var first = true
        for item in a {
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            write(item, into: &out)
        }
        out.append(UInt8(ascii: "]"))
    }

    static func writeObject(_ o: [String: Any], into out: inout [UInt8]) {
        out.append(UInt8(ascii: "{"))
        // The entries' positions are sorted by key in a buffer on the stack, and each value is read
        // at its position: sorting (key, value) pairs copied a string and an existential per move,
        // and `sorted` took an array from the heap for every object.
        withUnsafeTemporaryAllocation(of: Dictionary<String, Any>.Index.self, capacity: o.count) { buffer in
            guard let base = buffer.baseAddress else { return }
            var count = 0
            var i = o.startIndex
            while i != o.endIndex {
                (base + count).initialize(to: i)
                count += 1
                i = o.index(after: i)
            }
            let keys = o.keys
            sort(base, count: count) { keys[$0] < keys[$1] }
            for j in 0..<count {
                if j > 0 { out.append(UInt8(ascii: ",")) }
                writeString(keys[base[j]], into: &out)
                out.append(UInt8(ascii: ":"))
                write(o.values[base[j]], into: &out)
            }
            (base).deinitialize(count: count)
        }
        out.append(UInt8(ascii: "}"))
    }

    /// Sorts the `count` items at `base` by `less`: by insertion the handful a wire dictionary
    /// has, by the standard library's sort a larger one (a record may have many fields).
    static func sort<T>(_ base: UnsafeMutablePointer<T>, count: Int, by less: (T, T) -> Bool) {
        guard count > 16 else {
            for j in 1..<max(count, 1) {
                let moving = base.advanced(by: j).move()
                var k = j
                while k > 0 && less(moving, base[k - 1]) {
                    base.advanced(by: k).initialize(to: base.advanced(by: k - 1).move())
                    k -= 1
                }
                base.advanced(by: k).initialize(to: moving)
            }
            return
        }
        var all = UnsafeMutableBufferPointer(start: base, count: count)
        all.sort(by: less)
    }

    static func writeInteger(_ v: Int64, into out: inout [UInt8]) {
        // Digits from the end of a stack buffer: `String(v)` made a string to copy them from.
        if v < 0 { out.append(UInt8(ascii: "-")) }
        var magnitude = v.magnitude
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var start = 20
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            out.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start..<20]))
        }
    }

    static func writeDouble(_ d: Double, into out: inout [UInt8]) {
        guard d.isFinite else { out.append(contentsOf: "null".utf8); return }
        // Integral values as integers (exact below 2^53); -0.0 keeps its sign. Otherwise Swift's
        // description: the shortest text that reads back as the same double.
        if d == d.rounded(), abs(d) < 1e15, !(d == 0 && d.sign == .minus) {
            writeInteger(Int64(d), into: &out)
            return
        }
        out.append(contentsOf: "\(d)".utf8)
    }

    static func writeString(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // A native string's UTF-8 is read where it is; most strings need no escape and are copied whole.
        let done = s.utf8.withContiguousStorageIfAvailable { bytes -> Bool in
            for b in bytes where b < 0x20 || b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") {
                writeEscaped(bytes, into: &out)
                return true
            }
            out.append(contentsOf: bytes)
            return true
        }
        if done == nil { writeEscaped(Array(s.utf8), into: &out) }
        out.append(UInt8(ascii: "\""))
    }

    private static func writeEscaped<C: Collection>(_ bytes: C, into out: inout [UInt8]) where C.Element == UInt8 {
        for b in bytes {
            switch b {
            case UInt8(ascii: "\""): out.append(92); out.append(34)
            case UInt8(ascii: "\\"): out.append(92); out.append(92)
            case 10: out.append(92); out.append(UInt8(ascii: "n"))
            case 13: out.append(92); out.append(UInt8(ascii: "r"))
            case 9: out.append(92); out.append(UInt8(ascii: "t"))
            case 0..<0x20:
                out.append(contentsOf: [92, UInt8(ascii: "u"), 48, 48, Hex.digit(b >> 4), Hex.digit(b)])
            default: out.append(b)
            }
        }
    }
}
