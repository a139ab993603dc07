// Helpers shared by the STUN tests: hex, error-kind expectations, and the datagram decoder check
// (every prefix truncated, no piece decoding to the whole). Stream decoders use the TestSupport's
// `InputSplit`, the one split check of all the tests.

import Testing
import ZoneCore
@testable import STUN

/// Bytes from hex text; whitespace and newlines are ignored.
func bytes(hex text: String) -> [UInt8] {
    Hex.decode(text.utf8.filter { $0 != 0x20 && $0 != 0x0A && $0 != 0x09 && $0 != 0x0D })!
}

func hexString(_ bytes: [UInt8]) -> String { Hex.encode(bytes) }

/// Expects `body` to throw a `STUNError` of `kind`.
func expectError(
    _ kind: STUNError.Kind, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws(STUNError) -> Void
) {
    do throws(STUNError) {
        try body()
        Issue.record("expected a \(kind) error, nothing was thrown", sourceLocation: sourceLocation)
    } catch {
        #expect(error.kind == kind, "\(error)", sourceLocation: sourceLocation)
    }
}

/// The kind of error `body` throws, or nil when it succeeds.
func errorKind<T>(_ body: () throws(STUNError) -> T) -> STUNError.Kind? {
    do throws(STUNError) {
        _ = try body()
        return nil
    } catch {
        return error.kind
    }
}

/// Checks a datagram decoder against `input`: the whole decodes to `expected`; every strict
/// prefix (the input fed "a byte at a time") reports `truncated`; and the pieces of the input
/// split at seeded random points never decode to `expected` — a prefix is `truncated`, a suffix
/// fails or decodes to something else.
func verifyDatagramDecoder<T: Equatable>(
    _ input: [UInt8], expected: T, seed: UInt64 = 0x5EED,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ decode: ([UInt8]) throws(STUNError) -> T
) {
    do throws(STUNError) {
        #expect(try decode(input) == expected, sourceLocation: sourceLocation)
    } catch {
        Issue.record("whole input failed: \(error)", sourceLocation: sourceLocation)
    }
    for length in 0..<input.count {
        let kind = errorKind { () throws(STUNError) in try decode(Array(input[0..<length])) }
        #expect(kind == .truncated, "prefix of \(length) bytes gave \(String(describing: kind))",
                sourceLocation: sourceLocation)
    }
    var random = SeededRandom(seed: seed)
    for _ in 0..<64 where input.count > 1 {
        let cut = Int.random(in: 1..<input.count, using: &random)
        let prefix = Array(input[0..<cut])
        let suffix = Array(input[cut...])
        #expect(errorKind { () throws(STUNError) in try decode(prefix) } == .truncated, sourceLocation: sourceLocation)
        let suffixResult = try? decode(suffix)
        #expect(suffixResult != expected, "suffix after \(cut) decoded to the whole", sourceLocation: sourceLocation)
    }
}

/// The RFC 5769 transaction ID of §2.1–2.3.
let rfc5769TransactionID = STUNTransactionID(bytes: bytes(hex: "b7e7a701bc34d686fa87dfae"))!
/// The RFC 5769 §2.4 and RFC 8489 B.1 transaction ID.
let longTermTransactionID = STUNTransactionID(bytes: bytes(hex: "78ad3433c6ad72c029da412e"))!
/// The short-term password of RFC 5769 §2.1–2.3.
let rfc5769Password = "VOkJxbRl1RmTxUk/WvJxBt"
/// The username of RFC 5769 §2.4 and RFC 8489 B.1: マトリックス ("matrix" in katakana).
let matrixUsername = "\u{30DE}\u{30C8}\u{30EA}\u{30C3}\u{30AF}\u{30B9}"
/// The password of RFC 5769 §2.4 before SASLprep: soft hyphen, feminine ordinal, roman nine.
let matrixPassword = "The\u{00AD}M\u{00AA}tr\u{2168}"
