import Foundation
import Testing
@testable import StoreServer

@Suite("JSON writer")
struct JSONWriterTests {
    @Test("what it writes, Foundation reads back the same")
    func roundTrip() throws {
        let value: [String: Any] = ["s": "quote \" backslash \\ newline \n tab \t bell \u{7} é 🎉", "i": -42,
                                    "big": Int64.max, "u": UInt64(7), "d": 1.5, "whole": 3.0, "t": true, "f": false,
                                    "a": [1, "x", ["nested": [String: Any]()]] as [Any]]
        let bytes = JSONWriter.serialize(value)
        let back = try JSONSerialization.jsonObject(with: Data(bytes)) as! [String: Any]
        #expect(back["s"] as? String == value["s"] as? String)
        #expect((back["i"] as? NSNumber)?.intValue == -42)
        #expect((back["big"] as? NSNumber)?.int64Value == Int64.max)
        #expect((back["d"] as? NSNumber)?.doubleValue == 1.5)
        #expect(back["t"] as? Bool == true && back["f"] as? Bool == false)
        #expect((back["a"] as? [Any])?.count == 3)
        #expect(String(decoding: JSONWriter.serialize(["b": 1, "a": 2]), as: UTF8.self) == #"{"a":2,"b":1}"#)
    }

    @Test("keys come out sorted in objects of every size, empty and nested ones included")
    func sortedKeys() {
        #expect(String(decoding: JSONWriter.serialize([String: Any]()), as: UTF8.self) == "{}")
        // Past the sizes a record's dictionaries have (and past what is sorted on the stack).
        for size in [1, 2, 9, 21, 300] {
            var object: [String: Any] = [:]
            for i in 0..<size { object["k\(String(i * 7919 % 1000, radix: 16))"] = ["v": i] as [String: Any] }
            let text = String(decoding: JSONWriter.serialize(object), as: UTF8.self)
            let expected = object.keys.sorted().map { #""\#($0)":{"v":\#((object[$0] as! [String: Any])["v"]!)}"# }
            #expect(text == "{" + expected.joined(separator: ",") + "}", "size \(size)")
        }
    }

    private func text(_ value: Any) -> String { String(decoding: JSONWriter.serialize(value), as: UTF8.self) }

    @Test("the bytes of strings: quote, backslash and control characters escaped, the rest as UTF-8")
    func stringBytes() {
        #expect(text("") == #""""#)
        #expect(text("plain, past the fifteen bytes of a small string")
                == #""plain, past the fifteen bytes of a small string""#)
        #expect(text("q\"b\\n\nr\rt\tnul\u{0}us\u{1f}del\u{7f}/é🎉")
                == "\"q\\\"b\\\\n\\nr\\rt\\tnul\\u0000us\\u001fdel\u{7f}/é🎉\"")
        #expect(text(["k\"ey": "v"] as [String: Any]) == #"{"k\"ey":"v"}"#)
    }

    @Test("the bytes of numbers, booleans and null, of each type the wire format or the reader makes")
    func numberBytes() {
        let cases: [(Any, String)] = [
            (Int64.min, "-9223372036854775808"), (Int64.max, "9223372036854775807"), (Int64(0), "0"),
            (-5, "-5"), (Int.max, "9223372036854775807"), (UInt64.max, "18446744073709551615"), (Int32(-7), "-7"),
            (1.5, "1.5"), (3.0, "3"), (-0.0, "-0.0"), (0.1, "0.1"), (1e15, "1000000000000000.0"), (1e15 - 1, "999999999999999"),
            (-2.5e-300, "-2.5e-300"), (Double.nan, "null"), (Double.infinity, "null"),
            (NSNumber(value: 7), "7"), (NSNumber(value: 2.5), "2.5"), (NSNumber(value: 3.0), "3"),
            (true, "true"), (false, "false"), (NSNull(), "null"),
        ]
        for (value, expected) in cases { #expect(text(value) == expected, "\(value)") }
    }

    @Test("the bytes of nested objects and arrays: keys by code point, literals of other value types too")
    func nestedBytes() {
        let value: [String: Any] = [
            "b": [1, "x", 2.5, NSNull(), [String: Any](), [Any]()] as [Any], "a": ["recordName": "r"],
            "B": [["z": 1, "é": "e", "e": true] as [String: Any]] as [[String: Any]], "": Int64(-1),
        ]
        #expect(text(value)
                == #"{"":-1,"B":[{"e":true,"z":1,"é":"e"}],"a":{"recordName":"r"},"b":[1,"x",2.5,null,{},[]]}"#)
    }
}
