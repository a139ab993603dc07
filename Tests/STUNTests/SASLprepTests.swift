// SASLprep (RFC 4013): the examples of RFC 4013 §3, RFC 5769's password, and the prohibited
// tables of RFC 3454 that §2.3 names.

import Testing
@testable import STUN

@Suite("SASLprep")
struct SASLprepTests {
    @Test func rfc4013Examples() throws {
        // RFC 4013 §3: "I<U+00AD>X" → "IX"; "user" → "user"; "USER" → "USER"; "<U+00AA>" → "a";
        // "<U+2168>" → "IX"; "<U+0007>" → error; "<U+0627><U+0031>" → error (bidi).
        #expect(try SASLprep.prepare("I\u{00AD}X") == "IX")
        #expect(try SASLprep.prepare("user") == "user")
        #expect(try SASLprep.prepare("USER") == "USER")
        #expect(try SASLprep.prepare("\u{00AA}") == "a")
        #expect(try SASLprep.prepare("\u{2168}") == "IX")
        expectError(.prohibitedCharacter) { () throws(STUNError) in _ = try SASLprep.prepare("\u{0007}") }
        expectError(.prohibitedCharacter) { () throws(STUNError) in _ = try SASLprep.prepare("\u{0627}\u{0031}") }
    }

    @Test func rfc5769Password() throws {
        #expect(try SASLprep.prepare(matrixPassword) == "TheMatrIX")
        #expect(try SASLprep.prepare(matrixUsername) == matrixUsername)
    }

    @Test func mappings() throws {
        #expect(try SASLprep.prepare("a\u{00A0}b\u{3000}c") == "a b c")
        #expect(try SASLprep.prepare("a\u{200B}b") == "a b")  // in C.1.2, so space rather than nothing
        #expect(try SASLprep.prepare("a\u{FEFF}\u{FE0F}\u{200D}b") == "ab")
        #expect(try SASLprep.prepare("\u{FB01}") == "fi")
        #expect(try SASLprep.prepare("e\u{0301}") == "\u{00E9}")
        #expect(try SASLprep.prepare("") == "")
    }

    @Test func prohibited() {
        let prohibited: [UInt32] = [
            0x0000, 0x001F, 0x007F, 0x0085, 0x2028, 0xE000, 0xF8FF, 0xFDD0, 0xFFFE, 0x1FFFF, 0xFFFD, 0x2FF0,
            0x200E, 0x202E, 0xE0001, 0xE0041, 0x100000, 0x1D173,
        ]
        for scalar in prohibited {
            let text = "x" + String(Character(Unicode.Scalar(scalar)!))
            let kind = errorKind { () throws(STUNError) in try SASLprep.prepare(text) }
            #expect(kind == .prohibitedCharacter, "U+\(String(scalar, radix: 16))")
        }
    }

    @Test func bidi() throws {
        #expect(try SASLprep.prepare("\u{05D0}\u{05D1}") == "\u{05D0}\u{05D1}")
        #expect(try SASLprep.prepare("\u{0627}1\u{0628}") == "\u{0627}1\u{0628}")
        expectError(.prohibitedCharacter) { () throws(STUNError) in _ = try SASLprep.prepare("\u{05D0}a\u{05D1}") }
        expectError(.prohibitedCharacter) { () throws(STUNError) in _ = try SASLprep.prepare("1\u{05D0}") }
    }
}
