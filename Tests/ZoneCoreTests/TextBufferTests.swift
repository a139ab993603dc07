import Testing

import ZoneCore

// The text buffer SDP and candidate JSON are written through: numbers written digit by digit must read as `String(n)` does, at the
// edges too, and text must come out byte for byte (small and large, ASCII and not).
@Suite("Text buffer")
struct TextBufferTests {
    @Test("decimals at the edges read as String(n)", arguments: [0, 1, 9, 10, 99, 100, 65_535, 4_294_967_295,
                                                                  UInt64.max])
    func decimals(_ n: UInt64) {
        var text = TextBuffer(capacity: 0)
        text.decimal(n)
        #expect(text.string == String(n))
        var small = TextBuffer(capacity: 0)
        small.decimal(UInt8(truncatingIfNeeded: n))
        #expect(small.string == String(UInt8(truncatingIfNeeded: n)))
    }

    @Test("strings, literals and lines keep their bytes")
    func strings() {
        var text = TextBuffer(capacity: 4)
        let long = String(repeating: "x", count: 300)
        text.line("a=", "mid:0")
        text.append("s\u{e9}ance \u{1F4F9}")
        text.ascii(" ")
        text.append(long)
        text.append("")
        #expect(text.string == "a=mid:0\r\ns\u{e9}ance \u{1F4F9} " + long)
    }
}
