// The session descriptions in Fixtures/sdp/: real aiortc offers and answers (made by
// Fixtures/sdp/make-aiortc-sdp.py), a Chromium offer in Chromium's format, and our own offers in
// the browsers' dialect, which the aiortc answers answer.
import Foundation
import ZoneCore

@testable import SDP
@testable import Signaling

enum SDPFixtureFiles {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures/sdp")

    /// Every `.sdp` file's name, sorted.
    static var names: [String] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return files.filter { $0.hasSuffix(".sdp") }.sorted()
    }

    static func text(_ name: String) throws -> String {
        try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
    }

    /// The type a file's name says: answers are named `*-answer-*`.
    static func type(of name: String) -> SDPType {
        name.contains("answer") ? .answer : .offer
    }

    static func parse(_ name: String) throws -> SessionDescription {
        try SessionDescription(parsing: try text(name), type: type(of: name))
    }

    /// Our certificate's fingerprint in our fixtures.
    static let fingerprint = DTLSFingerprint.sha256(certificateDER: Array("zonertc fixture certificate".utf8))

    /// Our side in the browsers' dialect: DTLS, RTX, a seeded source identity and credentials.
    static func webRTCConfiguration(
        direction: MediaDirection, codecs: [RTPCodec] = [.vp8(), .h264()], seed: UInt64 = 14
    ) -> SilentVideoConfiguration {
        var random = SeededRandom(seed: seed)
        var config = SilentVideoConfiguration(
            sessionID: random.next() >> 1, iceCredentials: .random(using: &random),
            candidates: [
                ICECandidate(
                    foundation: "1", priority: 2_130_706_431, address: .ip(.loopbackV4), port: 50_000, type: .host)
            ],
            endOfCandidates: true, direction: direction, codecs: codecs,
            dtls: .init(fingerprint: fingerprint))
        config.dialect = .webRTC
        config.source = .random(using: &random)
        return config
    }

    /// Our offers, by the fixture file each must equal.
    static let ourOffers: [(name: String, configuration: SilentVideoConfiguration)] = [
        ("zonertc-offer-sendonly-vp8.sdp", webRTCConfiguration(direction: .sendOnly)),
        ("zonertc-offer-sendrecv-h264.sdp", webRTCConfiguration(direction: .sendReceive, codecs: [.h264(), .vp8()])),
    ]
}
