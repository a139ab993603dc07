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
}
