// Seeded mutations of valid messages: whatever the bytes, the decoders throw or decode, and what
// decodes re-encodes to something that decodes to the same attributes. (The libFuzzer target in
// Fuzz/STUNFuzz explores the same property far longer; this keeps a deterministic slice of it in
// every test run.)

import Testing
import ZoneCore
@testable import STUN

@Suite("Mutations")
struct MutationTests {
    @Test func mutatedMessagesNeverMisbehave() throws {
        let key = STUNIntegrityKey(bytes: Array("k".utf8))
        var seeds: [[UInt8]] = [RFC5769.request, RFC5769.ipv4Response, RFC5769.ipv6Response, RFC5769.longTermRequest,
                                RFC8489B1.request]
        var random = SeededRandom(seed: 2024)
        for attribute in sampleAttributes {
            let m = STUNMessage(method: .allocate, messageClass: .request, transactionID: .random(using: &random),
                                attributes: [attribute, .username("u")])
            seeds.append(try m.encode(key: key, fingerprint: random.chance(0.5)))
        }
        var decodedCount = 0
        for round in 0..<20_000 {
            var b = seeds[round % seeds.count]
            for _ in 0...Int.random(in: 0...3, using: &random) {
                switch Int.random(in: 0..<4, using: &random) {
                case 0 where !b.isEmpty:
                    b[Int.random(in: 0..<b.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
                case 1 where b.count > 20:
                    b.removeLast(Int.random(in: 1...min(8, b.count - 20), using: &random))
                case 2:
                    let count = Int.random(in: 1...8, using: &random)
                    b += (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }
                default:
                    if b.count > 3 { b[3] = UInt8.random(in: 0...255, using: &random) }
                }
            }
            _ = try? STUNIntegrity.verify(b, key: key)
            _ = try? ChannelData(decoding: b)
            guard let decoded = try? STUNMessage(decoding: b, verifyingFingerprint: false) else { continue }
            decodedCount += 1
            let encoded = try decoded.encode()
            let again = try STUNMessage(decoding: encoded)
            #expect(again.attributes == decoded.attributes.filter { !$0.isComputedByEncoder })
        }
        #expect(decodedCount > 100)
    }
}
