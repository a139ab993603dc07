import Testing
import TestSupport
import ZoneCore

// The one hex codec: digits both ways, whole texts, integers, and the decoder fed in pieces.

@Test func digitsBothWays() {
    for nibble in UInt8(0)...15 {
        let digit = Hex.digit(nibble)
        #expect(Hex.value(digit) == nibble)
        #expect(Hex.digit(nibble | 0xF0) == digit)
    }
    #expect(Hex.value(UInt8(ascii: "A")) == 10)
    #expect(Hex.value(UInt8(ascii: "F")) == 15)
    for byte in [UInt8(ascii: "g"), UInt8(ascii: "G"), UInt8(ascii: "/"), UInt8(ascii: ":"), UInt8(ascii: "@"),
                 UInt8(ascii: "`"), 0, 0xFF] {
        #expect(Hex.value(byte) == nil)
    }
}

@Test func encodeAndDecode() {
    let bytes: [UInt8] = [0x00, 0x0F, 0xA5, 0xFF, 0x10]
    #expect(Hex.encode(bytes) == "000fa5ff10")
    #expect(Hex.encode(bytes, separator: UInt8(ascii: ":")) == "00:0f:a5:ff:10")
    #expect(Hex.encode(bytes, separator: UInt8(ascii: ":"), uppercase: true) == "00:0F:A5:FF:10")
    #expect(Hex.encode([UInt8]()) == "")
    #expect(Hex.decode("000FA5ff10".utf8) == bytes)
    #expect(Hex.decode("".utf8) == [])
    #expect(Hex.decode("abc".utf8) == nil)
    #expect(Hex.decode("zz".utf8) == nil)
    #expect(Hex.decode("ab cd".utf8) == nil)
}

@Test func integers() {
    #expect(Hex.string(UInt16(0x1), digits: 3) == "001")
    #expect(Hex.string(UInt64(0xdead_beef)) == "deadbeef")
    #expect(Hex.string(UInt8(0xab), digits: 1) == "ab")
    #expect(Hex.string(UInt32(0)) == "0")
    for value: UInt64 in [0, 1, 0xf, 0x10, 0xdead_beef, .max] {
        #expect(Hex.string(value) == String(value, radix: 16))
    }
    var text: [UInt8] = []
    Hex.append(UInt8(5), digits: 4, to: &text)
    Hex.append(UInt64(0x2a), to: &text)
    #expect(String(decoding: text, as: UTF8.self) == "00052a")
    #expect(Hex.integer("42E01f".utf8, as: UInt32.self) == 0x42_E01F)
    #expect(Hex.integer("ffffffffffffffff".utf8, as: UInt64.self) == .max)
    #expect(Hex.integer("1ffffffffffffffff".utf8, as: UInt64.self) == nil)
    #expect(Hex.integer("".utf8, as: UInt64.self) == nil)
    #expect(Hex.integer("-1".utf8, as: UInt64.self) == nil)
}

/// The decoder gives the same bytes, or the same refusal, however its text is cut.
@Test(arguments: ["", "00", "0123456789abcdefABCDEF", "a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5", "abc", "a5x5"])
func decoderIgnoresHowTextIsSplit(text: String) {
    let input = Array(text.utf8)
    let mismatches = InputSplit.mismatches(input, seed: 3, randomRuns: 20, maxPiece: 5) { pieces -> [UInt8]? in
        var decoder = HexDecoder()
        for piece in pieces { decoder.append(piece) }
        return decoder.finish()
    }
    #expect(mismatches == [])
    // The whole text against the standard library's reading of each pair.
    var reference: [UInt8]? = input.count.isMultiple(of: 2) ? [] : nil
    for start in stride(from: 0, to: input.count, by: 2) where reference != nil {
        let pair = String(decoding: input[start..<min(start + 2, input.count)], as: UTF8.self)
        if let byte = UInt8(pair, radix: 16) { reference?.append(byte) } else { reference = nil }
    }
    #expect(Hex.decode(input) == reference)
}
