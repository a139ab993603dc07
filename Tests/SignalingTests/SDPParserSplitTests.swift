import Testing
import ZoneCore

@testable import SDP
@testable import Signaling
import TestSupport

// Feeding the incremental parser its input whole, a line at a time, a byte at a time or split
// at random offsets must give the same description or the same error (the
// ByteToMessageDecoderVerifier idea from swift-nio).

/// Parses `pieces` fed one after the other.
private func parse(_ pieces: [ArraySlice<UInt8>]) -> Result<SessionDescription, SDPParseError> {
    var parser = SDPParser(type: .offer)
    do {
        for piece in pieces { try parser.feed(piece) }
        return .success(try parser.finish())
    } catch {
        return .failure(error)
    }
}

/// Parses `bytes` fed in the pieces `cuts` delimits (sorted offsets strictly inside `bytes`).
private func parse(_ bytes: [UInt8], cuts: [Int]) -> Result<SessionDescription, SDPParseError> {
    let bounds = [0] + cuts + [bytes.count]
    return parse(zip(bounds, bounds.dropFirst()).map { bytes[$0..<$1] })
}

/// The offset after every line feed, except at the very end.
private func lineBoundaries(_ bytes: [UInt8]) -> [Int] {
    bytes.indices.filter { bytes[$0] == UInt8(ascii: "\n") && $0 + 1 < bytes.count }.map { $0 + 1 }
}

/// Inputs to split: the offers, and broken variants (the error must not depend on the split).
private let splitInputs: [(name: String, text: String)] =
    Fixtures.offers + [
        ("broken candidate", Fixtures.chromeOffer.replacingOccurrences(of: "typ srflx", with: "typ sfrlx")),
        ("broken port", Fixtures.firefoxOffer.replacingOccurrences(of: "m=video 9 ", with: "m=video 9x ")),
        ("blank line", Fixtures.aiortcOffer.replacingOccurrences(of: "a=mid:1\n", with: "a=mid:1\n\n")),
    ]

@Test(arguments: splitInputs.map(\.name))
func splitAnywhereGivesTheSameResult(name: String) throws {
    let bytes = Array(try #require(splitInputs.first { $0.name == name }).text.utf8)
    let whole = parse(bytes, cuts: [])
    #expect(parse(bytes, cuts: lineBoundaries(bytes)) == whole, "line at a time")
    // Byte at a time and seeded random splits: the one split check of the tests.
    #expect(InputSplit.mismatches(bytes, seed: 0x5D9_0001, randomRuns: 100, maxPiece: 200, parse) == [])
    if name.hasPrefix("broken") || name == "blank line" {
        guard case .failure = whole else {
            Issue.record("\(name) parsed")
            return
        }
    } else {
        _ = try whole.get()
    }
}

/// Every prefix of an offer either parses to a description whose lines begin the full
/// description's lines (all but its last line, which may be cut short), or fails with a
/// parse error: never a crash.
@Test(arguments: Fixtures.offers.map(\.name))
func everyPrefixParsesShorterOrFailsClearly(name: String) throws {
    let bytes = Array(try #require(Fixtures.offers.first { $0.name == name }).text.utf8)
    let full = try SessionDescription(parsing: bytes, type: .offer)
    var random = SeededRandom(seed: 0x5D9_0002)
    let offsets = Set(lineBoundaries(bytes) + (0..<400).map { _ in Int(random.next() % UInt64(bytes.count + 1)) })
    var parsed = 0
    var failed = 0
    for offset in offsets.sorted() {
        switch parse(Array(bytes[..<offset]), cuts: []) {
        case .success(let prefix):
            parsed += 1
            #expect(prefix.media.count <= full.media.count)
            let lines = prefix.lines
            #expect(Array(lines.dropLast()) == Array(full.lines.prefix(lines.count - 1)), "cut at \(offset)")
            if offset == 0 || bytes[offset - 1] == UInt8(ascii: "\n") {
                #expect(lines == Array(full.lines.prefix(lines.count)), "cut at line boundary \(offset)")
            }
        case .failure(let error):
            failed += 1
            #expect(error.lineNumber >= 1)
            #expect(!error.detail.isEmpty)
        }
    }
    // Cuts before t= fail; most later cuts parse.
    #expect(parsed > 0 && failed > 0)
}
