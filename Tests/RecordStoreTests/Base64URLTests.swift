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

    @Test func refusesWhatIsNotBase64URL() {
        #expect(Base64URL.decode("ab+c") == nil)
        #expect(Base64URL.decode("abc=") == nil)
        #expect(Base64URL.decode("abcde") == nil, "a length of 1 mod 4")
        #expect(Base64URL.decode("AB") == nil, "non-zero leftover bits")
        #expect(Base64URL.decode("AA") == [0])
        #expect(ChangeToken(rawValue: "not a token").payload == nil)
    }
}
