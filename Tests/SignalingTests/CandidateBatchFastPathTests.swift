import Foundation
import Testing
import ZoneCore

@testable import SDP
@testable import Signaling

/// Batches our peers write are read without the JSON decoder; what it reads must be what a JSON
/// parser reads, and anything else must be left to the decoder.
@Suite struct CandidateBatchFastPathTests {
    @Test func readsWhatAJSONParserReads() throws {
        var random = SeededRandom(seed: 12)
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789 :.+/-é€")
        for _ in 0..<300 {
            let candidates = (0..<Int(random.next() % 5)).map { _ in
                String((0..<Int(random.next() % 40)).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] })
            }
            let batch = CandidateBatch(candidates: candidates, endOfCandidates: random.next() % 2 == 0)
            let fast = try #require(CandidateBatch.canonical(batch.json), "\(batch.json)")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(batch.json.utf8)) as? [String: Any])
            #expect(fast.candidates == object["candidates"] as? [String])
            #expect(fast.endOfCandidates == object["eoc"] as? Bool)
            #expect(fast == batch)
        }
    }

    @Test func candidatesPrintedIntoTheBatchAreTheirDescriptionsEscaped() {
        var quoted = SignalFixtures.candidate(octet: 2, ufrag: "uf\\1")
        quoted.extensions = [ICECandidate.Extension(name: "x-note", value: "\"é€\"")]
        let plain = SignalFixtures.candidate(octet: 1, ufrag: "uf1")
        let sets: [[ICECandidate]] = [[], [plain], [SignalFixtures.candidate(octet: 1, ufrag: nil), quoted, plain]]
        for candidates in sets {
            for eoc in [false, true] {
                let printed = CandidateBatch.json(printing: candidates, endOfCandidates: eoc)
                #expect(printed == CandidateBatch(candidates: candidates.map(\.description), endOfCandidates: eoc).json)
            }
        }
    }

    @Test func leavesAnythingElseToTheDecoder() throws {
        for text in [#"{"v":1,"candidates":["a\"b"],"eoc":true}"#, #"{"v":1,"candidates":["a"]}"#,
                     #"{"v":1,"candidates":["a"],"eoc":true,"x":1}"#, #"{"v":1,"candidates":["a",],"eoc":true}"#,
                     #"{"v":1,"candidates":["a""b"],"eoc":true}"#, #"{"v":1,"candidates":[1],"eoc":true}"#,
                     #"{ "v":1,"candidates":["a"],"eoc":true}"#, #"{"v":1,"candidates":["a\n"],"eoc":false}"#] {
            #expect(CandidateBatch.canonical(text) == nil, "\(text)")
        }
        #expect(try CandidateBatch(json: #"{"v":1,"candidates":["a\"b"],"eoc":true}"#).candidates == ["a\"b"])
    }
}
