import Foundation
import Testing
import ZoneCore
@testable import RecordStore

/// The token codec's base64url agrees with Foundation's base64 (alphabet swapped, padding
/// dropped) and refuses what is not base64url.
@Suite struct Base64URLTests {
    @Test func agreesWithFoundationAndRoundTrips() {
        var random = SeededRandom(seed: 4)
        for length in 0..<70 {
            let bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            let foundation = Data(bytes).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            #expect(Base64URL.encode(bytes) == foundation)
            #expect(Base64URL.decode(foundation) == bytes)
        }
    }

    @Test func decodesIntoABufferAsIntoAnArray() {
        var random = SeededRandom(seed: 5)
        for length in 0..<70 {
            let bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            let text = Base64URL.encode(bytes)
            var out = [UInt8](repeating: 0xEE, count: text.utf8.count * 3 / 4)
            let written = out.withUnsafeMutableBufferPointer { Base64URL.decode(text, into: $0) }
            #expect(written == length && Array(out[..<length]) == bytes)
        }
        var out = [UInt8](repeating: 0, count: 3)
        for bad in ["ab+c", "abc=", "abcde", "AB", "A*AA"] {
            #expect(out.withUnsafeMutableBufferPointer { Base64URL.decode(bad, into: $0) } == nil)
        }
    }

    @Test func tokensCarryTheirPayloadWhole() {
        for p in [ChangeToken.Payload(kind: .zone, owner: .max, incarnation: 0, sequence: 1, issuedAtMs: .min),
                  ChangeToken.Payload(kind: .database, owner: 0x0102_0304_0506_0708, incarnation: .max,
                                      sequence: .max, issuedAtMs: -1)] {
            let token = ChangeToken(p)
            #expect(token.rawValue.utf8.count == 56 && token.payload == p)
            #expect(ChangeToken(rawValue: String(token.rawValue.dropLast())).payload == nil)
            #expect(ChangeToken(rawValue: token.rawValue + "AAAA").payload == nil)
        }
    }

    @Test func refusesWhatIsNotBase64URL() {
        #expect(Base64URL.decode("ab+c") == nil)
        #expect(Base64URL.decode("abc=") == nil)
        #expect(Base64URL.decode("abcde") == nil, "a length of 1 mod 4")
        #expect(Base64URL.decode("AB") == nil, "non-zero leftover bits")
        #expect(Base64URL.decode("AA") == [0])
        #expect(ChangeToken(rawValue: "not a token").payload == nil)
    }
}
