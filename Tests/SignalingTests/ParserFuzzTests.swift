import Testing
import ZoneCore

@testable import SDP
@testable import Signaling

// Seeded random mutations of the fixtures (byte flips, line drops, line duplications) fed to
// the SDP and candidate parsers. Nothing may crash; every failure must be the parser's own
// error with a usable position; everything that parses must print to text that parses back to
// the same value; and splitting the input must not change the outcome.

private let shards = 8
private let mutationsPerShard = 20_000 / shards

private let sdpCorpus: [[UInt8]] = {
    var random = SeededRandom(seed: 77)
    let settings = SilentVideoConfiguration(
        sessionID: 7, iceCredentials: .random(using: &random),
        candidates: [try! ICECandidate(parsing: Fixtures.candidates[1].text)], endOfCandidates: true,
        dtls: .init(fingerprint: .sha256(certificateDER: [1, 2, 3])))
    let offer = SessionDescription.silentVideoOffer(settings)
    let answer = try! SessionDescription.answer(to: offer, settings)
    return (Fixtures.offers.map(\.text) + [offer.description, answer.description]).map { Array($0.utf8) }
}()

private let candidateCorpus: [[UInt8]] = Fixtures.candidates.map { Array($0.text.utf8) }

/// Applies one to four random mutations: flip bits of a byte, overwrite a byte, drop a line,
/// duplicate a line (next to itself or elsewhere).
private func mutate(_ input: [UInt8], separator: UInt8, using random: inout SeededRandom) -> [UInt8] {
    var bytes = input
    for _ in 0...(random.next() % 4) {
        guard !bytes.isEmpty else { break }
        switch random.next() % 5 {
        case 0:
            let index = Int(random.next() % UInt64(bytes.count))
            bytes[index] ^= UInt8(truncatingIfNeeded: random.next() % 255 + 1)
        case 1:
            let index = Int(random.next() % UInt64(bytes.count))
            // Favour the bytes the grammar cares about.
            let interesting: [UInt8] = [0, 9, 10, 13, 32, 0x3A, 0x3D, 0x2F, 0x2D, 0x2E, 0x30, 0x39, 0x7F, 0xC3, 0xFF]
            bytes[index] = interesting[Int(random.next() % UInt64(interesting.count))]
        case 2, 3, 4:
            // SDPGrammar.split, not Sequence.split: the generic one costs most of a debug run.
            var lines = SDPGrammar.split(bytes[...], on: separator, omittingEmpty: false)
            guard lines.count > 1 else { continue }
            let index = Int(random.next() % UInt64(lines.count))
            switch random.next() % 3 {
            case 0: lines.remove(at: index)
            case 1: lines.insert(lines[index], at: index)
            default: lines.insert(lines[index], at: Int(random.next() % UInt64(lines.count + 1)))
            }
            var joined: [UInt8] = []
            joined.reserveCapacity(bytes.count + 200)
            for (number, line) in lines.enumerated() {
                if number > 0 { joined.append(separator) }
                joined.append(contentsOf: line)
            }
            bytes = joined
        default:
            break
        }
    }
    return bytes
}

private func parseSDP(_ bytes: [UInt8], cuts: [Int] = []) -> Result<SessionDescription, SDPParseError> {
    var parser = SDPParser(type: .offer)
    var start = 0
    do {
        for cut in cuts + [bytes.count] {
            try parser.feed(bytes[start..<cut])
            start = cut
        }
        return .success(try parser.finish())
    } catch {
        return .failure(error)
    }
}

@Test(arguments: 0..<shards)
func sdpParserSurvivesMutations(shard: Int) throws {
    var random = SeededRandom(seed: 0xF022_0000 + UInt64(shard))
    var parsed = 0
    for _ in 0..<mutationsPerShard {
        let source = sdpCorpus[Int(random.next() % UInt64(sdpCorpus.count))]
        let bytes = mutate(source, separator: UInt8(ascii: "\n"), using: &random)
        let outcome = parseSDP(bytes)
        switch outcome {
        case .success(let description):
            parsed += 1
            let again = try SessionDescription(parsing: description.description, type: .offer)
            #expect(again == description, "round trip of a mutated input:\n\(String(decoding: bytes, as: UTF8.self))")
        case .failure(let error):
            let lineCount = SDPGrammar.split(bytes[...], on: UInt8(ascii: "\n"), omittingEmpty: false).count
            #expect((1...lineCount + 1).contains(error.lineNumber), "\(error)")
            #expect(!error.detail.isEmpty)
            #expect(error.description.hasPrefix("invalid session description, line \(error.lineNumber)"))
            #expect((error.kind == .invalidCandidate) == (error.candidateError != nil))
        }
        if random.next() % 8 == 0, bytes.count > 2 {
            let cuts = Set((0..<4).map { _ in Int(random.next() % UInt64(bytes.count - 1)) + 1 }).sorted()
            #expect(parseSDP(bytes, cuts: cuts) == outcome)
        }
    }
    // The mutations are mild enough that some inputs still parse, so round trips are exercised.
    #expect(parsed > 0)
}

@Test(arguments: 0..<shards)
func candidateParserSurvivesMutations(shard: Int) throws {
    var random = SeededRandom(seed: 0xCA4D_0000 + UInt64(shard))
    var parsed = 0
    for _ in 0..<mutationsPerShard {
        let source = candidateCorpus[Int(random.next() % UInt64(candidateCorpus.count))]
        // Tokens play the part of lines: drop or duplicate a field.
        let text = String(decoding: mutate(source, separator: UInt8(ascii: " "), using: &random), as: UTF8.self)
        do {
            let candidate = try ICECandidate(parsing: text)
            parsed += 1
            #expect(try ICECandidate(parsing: candidate.description) == candidate, "\(text.debugDescription)")
        } catch {
            #expect(error.input == text)
            #expect(!error.detail.isEmpty)
            #expect((error.kind == .missingPrefix) == (error.field == nil))
        }
    }
    #expect(parsed > 0)
}
