// The payload cache the simulator's two peers share: an envelope or chunk printed in this
// process is read as the description or candidates it was printed from, which must be exactly
// what parsing its text gives (or the simulated peers would act on something a real peer never
// sees); any other text is parsed and checked as always.
import Foundation
import RecordStore
import Testing
import ZoneCore

@testable import SDP
@testable import Signaling

@Suite("Session description cache")
struct SignalPayloadCacheTests {
    private static let zone = ZoneID(zoneName: "room_ab12cd34", ownerName: "_a11ce")

    /// Our offer and answer in both dialects: plain RTP and DTLS-SRTP in the browsers' dialect.
    private static func descriptions() throws -> [SessionDescription] {
        let credentials = ICECredentials(usernameFragment: "Ufr4", password: "cachepasswordcachepasswd")
        let plain = SilentVideoConfiguration(sessionID: 11, iceCredentials: credentials, dtls: nil)
        var browser = SilentVideoConfiguration(
            sessionID: 12, iceCredentials: credentials,
            candidates: [ICECandidate(foundation: "1", priority: 2_122_260_223,
                                      address: .ip(try IPAddress(parsing: "192.0.2.7")), port: 40_000, type: .host,
                                      usernameFragment: "Ufr4")],
            dtls: .init(fingerprint: .sha256(certificateDER: [1, 2, 3])))
        browser.dialect = .webRTC
        var random = SeededRandom(seed: 3)
        browser.source = .random(using: &random)
        var answerer = browser
        answerer.sessionID = 13
        return [.silentVideoOffer(plain), .silentVideoOffer(browser),
                try .answer(to: .silentVideoOffer(plain), plain),
                try .answer(to: .silentVideoOffer(browser), answerer)]
    }

    private static func envelope(_ description: SessionDescription, as type: EnvelopeType) -> SignalEnvelope {
        SignalEnvelope(sessionKey: "room_ab12cd34#_a11ce#_b0b", roomID: "room_ab12cd34",
                       callEpoch: CallEpoch(milliseconds: 1_700_000_000_000), ownerUserID: "_a11ce",
                       envelopeType: type, description: description, updatedAtMs: 1)
    }

    @Test func aRememberedDescriptionIsWhatParsingItsTextGives() throws {
        for description in try Self.descriptions() {
            let cache = SignalPayloadCache()
            let type: EnvelopeType = description.type == .offer ? .offer : .answer
            let record = Self.envelope(description, as: type).record(name: "SE_x", in: Self.zone, payloads: cache)
            let text = try #require(record.fields[SignalField.payload]?.stringValue)
            #expect(cache.description(printedAs: text, type: description.type) == description)
            // The round trip the cache stands in for.
            #expect(try SessionDescription(parsing: text, type: description.type) == description)
            #expect(try SignalEnvelope(decoding: record, payloads: cache)
                    == SignalEnvelope(decoding: record))
        }
    }

    @Test func otherTextIsParsedAndChecked() throws {
        let cache = SignalPayloadCache()
        let offer = try #require(try Self.descriptions().first)
        var record = Self.envelope(offer, as: .offer).record(name: "SE_x", in: Self.zone, payloads: cache)
        let text = try #require(record.fields[SignalField.payload]?.stringValue)
        // The same text saved as an answer is not the remembered offer: it is parsed, as an answer.
        var asAnswer = record
        asAnswer.fields[SignalField.envelopeType] = .string("answer")
        #expect(try SignalEnvelope(decoding: asAnswer, payloads: cache).description.type == .answer)
        // Text that differs by one byte is parsed, and its error reported.
        record.fields[SignalField.payload] = .string(text.replacingOccurrences(of: "v=0", with: "v=1"))
        let error = try #require(throws: SignalRecordError.self) {
            try SignalEnvelope(decoding: record, payloads: cache)
        }
        #expect(error.kind == .invalidSessionDescription)
    }

    @Test func aFullCacheStartsAgain() throws {
        let cache = SignalPayloadCache()
        let offer = try #require(try Self.descriptions().first)
        var texts: [String] = []
        for n in 0...SignalPayloadCache.capacity {
            var description = offer
            description.origin.sessionVersion = UInt64(n)
            texts.append(description.description)
            cache.remember(description, as: description.description)
        }
        #expect(cache.description(printedAs: texts[0], type: .offer) == nil)
        #expect(cache.description(printedAs: texts[SignalPayloadCache.capacity], type: .offer) != nil)
    }

    @Test func aRememberedBatchIsWhatParsingItsTextGives() throws {
        let candidates = [
            ICECandidate(foundation: "1", priority: 2_122_260_223, address: .ip(try IPAddress(parsing: "192.0.2.7")),
                         port: 40_000, type: .host, usernameFragment: "Ufr4"),
            ICECandidate(foundation: "2", priority: 1_686_052_607,
                         address: .ip(try IPAddress(parsing: "2001:db8::9")), port: 3478, type: .serverReflexive,
                         relatedAddress: .ip(try IPAddress(parsing: "10.0.0.2")), relatedPort: 50_000,
                         usernameFragment: "Ufr4"),
        ]
        for endOfCandidates in [false, true] {
            let cache = SignalPayloadCache()
            let chunk = SignalIceChunk(sessionKey: "room_ab12cd34#_a11ce#_b0b", roomID: "room_ab12cd34",
                                       callEpoch: CallEpoch(milliseconds: 1_700_000_000_000), ownerUserID: "_a11ce",
                                       candidates: candidates, endOfCandidates: endOfCandidates,
                                       chunkCreatedAtMs: 5, seq: 0, ufrag: "Ufr4")
            var record = chunk.record(name: "IC_x", in: Self.zone, payloads: cache)
            let text = try #require(record.fields[SignalField.candidate]?.stringValue)
            #expect(cache.batch(printedAs: text)?.candidates == candidates)
            #expect(try SignalIceChunk(decoding: record, payloads: cache) == SignalIceChunk(decoding: record))
            #expect(try SignalIceChunk(decoding: record, payloads: cache) == chunk)
            // A batch changed on the way is parsed: its bad candidate is rejected, the rest kept.
            record.fields[SignalField.candidate] = .string(text.replacingOccurrences(of: "udp", with: "sctp"))
            let tampered = try SignalIceChunk(decoding: record, payloads: cache)
            #expect(tampered.candidates.isEmpty && tampered.rejectedCandidates.count == 2)
        }
    }
}
