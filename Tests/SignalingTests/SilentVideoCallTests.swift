import Testing
import ZoneCore

@testable import SDP
@testable import Signaling

private let fingerprint = DTLSFingerprint.sha256(certificateDER: Array("our certificate".utf8))

private func config(
    dtls: Bool = true, candidates: [ICECandidate] = [], endOfCandidates: Bool = false,
    direction: MediaDirection = .sendReceive, answerRole: DTLSSetupRole = .active, seed: UInt64 = 1
) -> SilentVideoConfiguration {
    var random = SeededRandom(seed: seed)
    return SilentVideoConfiguration(
        sessionID: random.next() >> 1, iceCredentials: .random(using: &random), candidates: candidates,
        endOfCandidates: endOfCandidates, direction: direction,
        dtls: dtls ? .init(fingerprint: fingerprint, answerRole: answerRole) : nil)
}

private let hostCandidate = ICECandidate(
    foundation: "1", priority: 2_130_706_431, address: .ip(.loopbackV4), port: 50_000, type: .host,
    generation: 0)
private let mdnsCandidate = ICECandidate(
    foundation: "2", priority: 2_130_706_175, address: .hostname("7c1e2d0a-1111-4222-8333-944455556666.local"),
    port: 50_001, type: .host)

// MARK: - Offer

@Test func silentVideoOfferText() throws {
    var settings = config(candidates: [hostCandidate], endOfCandidates: true)
    settings.iceCredentials = ICECredentials(usernameFragment: "Ufr4", password: "abcdefghijklmnopqrstuvwx")
    settings.sessionID = 42
    let offer = SessionDescription.silentVideoOffer(settings)
    let expected = [
        "v=0",
        "o=- 42 2 IN IP4 127.0.0.1",
        "s=-",
        "t=0 0",
        "a=group:BUNDLE 0",
        "m=video 9 UDP/TLS/RTP/SAVPF 96 97",
        "c=IN IP4 0.0.0.0",
        "a=ice-ufrag:Ufr4",
        "a=ice-pwd:abcdefghijklmnopqrstuvwx",
        "a=ice-options:trickle",
        "a=fingerprint:\(fingerprint)",
        "a=setup:actpass",
        "a=mid:0",
        "a=sendrecv",
        "a=rtcp-mux",
        "a=rtpmap:96 VP8/90000",
        "a=rtcp-fb:96 ccm fir",
        "a=rtcp-fb:96 nack",
        "a=rtcp-fb:96 nack pli",
        "a=rtpmap:97 H264/90000",
        "a=rtcp-fb:97 ccm fir",
        "a=rtcp-fb:97 nack",
        "a=rtcp-fb:97 nack pli",
        "a=fmtp:97 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f",
        "a=candidate:1 1 udp 2130706431 127.0.0.1 50000 typ host generation 0",
        "a=end-of-candidates",
    ]
    #expect(offer.lines == expected)
    #expect(offer.description == expected.map { $0 + "\r\n" }.joined())
}

@Test(arguments: [true, false], MediaDirection.allCases)
func offerGeneratesParsesEqual(dtls: Bool, direction: MediaDirection) throws {
    let offer = SessionDescription.silentVideoOffer(
        config(dtls: dtls, candidates: [hostCandidate, mdnsCandidate], endOfCandidates: dtls, direction: direction))
    let parsed = try SessionDescription(parsing: offer.description, type: .offer)
    #expect(parsed == offer)

    let video = try #require(parsed.media.first)
    #expect(parsed.media.count == 1)
    #expect(video.kind == .video && video.port == 9)
    #expect(video.transportProtocol == (dtls ? "UDP/TLS/RTP/SAVPF" : "RTP/AVPF"))
    #expect(video.mid == "0" && parsed.bundleGroup == ["0"])
    #expect(parsed.direction(for: video) == direction)
    #expect(parsed.setupRole(for: video) == (dtls ? .activePassive : nil))
    #expect(parsed.fingerprints(for: video) == (dtls ? [fingerprint] : []))
    #expect(parsed.iceCredentials(for: video) == config().iceCredentials)
    #expect(video.candidates == [hostCandidate, mdnsCandidate])
    #expect(parsed.endOfCandidates(for: video) == dtls)
    #expect(video.codecs == [.vp8(), .h264()])
    #expect(video.isRTCPMultiplexed)
}

@Test func randomCredentialsAreValidAndSeeded() {
    var a = SeededRandom(seed: 9)
    var b = SeededRandom(seed: 9)
    let first = ICECredentials.random(using: &a)
    #expect(first == ICECredentials.random(using: &b))
    #expect(ICECredentials.isValidUsernameFragment(first.usernameFragment))
    #expect(ICECredentials.isValidPassword(first.password))
    #expect(first != ICECredentials.random(using: &a))
}

// MARK: - Answer

@Test func answerToOurOwnOffer() throws {
    let offer = SessionDescription.silentVideoOffer(config(candidates: [hostCandidate]))
    let ours = config(candidates: [mdnsCandidate], endOfCandidates: true, seed: 2)
    let answer = try SessionDescription.answer(to: offer, ours)
    #expect(answer.type == .answer)
    #expect(try SessionDescription(parsing: answer.description, type: .answer) == answer)
    let video = try #require(answer.media.first)
    #expect(answer.bundleGroup == ["0"])
    #expect(video.mid == "0")
    #expect(video.codecs == [.vp8(), .h264()])
    #expect(answer.setupRole(for: video) == .active)
    #expect(answer.fingerprints(for: video) == [fingerprint])
    #expect(answer.iceCredentials(for: video) == ours.iceCredentials)
    #expect(video.candidates == [mdnsCandidate] && answer.endOfCandidates(for: video))
    #expect(answer.direction(for: video) == .sendReceive)
    #expect(video.isRTCPMultiplexed)
}

@Test func answerToChromeTakesVideoOnly() throws {
    let offer = try SessionDescription(parsing: Fixtures.chromeOffer, type: .offer)
    let answer = try SessionDescription.answer(to: offer, config())
    #expect(answer.media.count == 3)
    let (audio, video, data) = (answer.media[0], answer.media[1], answer.media[2])
    #expect(audio.isRejected && audio.kind == .audio && audio.mid == "0")
    #expect(audio.lines.first == "m=audio 0 UDP/TLS/RTP/SAVPF 111 63 9 0 8 13 110 126")
    #expect(data.isRejected && data.kind == .application && data.mid == "2")
    #expect(!video.isRejected && video.mid == "1")
    #expect(answer.bundleGroup == ["1"])
    // VP8 at Chrome's 96, and the constrained-baseline H.264 at 106 (not the baseline 102).
    #expect(video.payloadTypes == [96, 106])
    #expect(video.codecs.map(\.name) == ["VP8", "H264"])
    #expect(video.codecs.allSatisfy { $0.feedback == RTPCodec.videoFeedback })
    // Chrome sends only, so we only receive.
    #expect(answer.direction(for: video) == .receiveOnly)
    #expect(answer.setupRole(for: video) == .active)
    #expect(try SessionDescription(parsing: answer.description, type: .answer) == answer)
}

@Test func answerToFirefoxUsesSessionLevelFingerprint() throws {
    let offer = try SessionDescription(parsing: Fixtures.firefoxOffer, type: .offer)
    let answer = try SessionDescription.answer(to: offer, config(answerRole: .passive))
    let video = answer.media[1]
    #expect(answer.media[0].isRejected)
    #expect(video.payloadTypes == [120, 126])
    #expect(answer.setupRole(for: video) == .passive)
    #expect(answer.bundleGroup == ["1"])
}

@Test func answerToAiortcKeepsOnlyCommonFeedback() throws {
    let offer = try SessionDescription(parsing: Fixtures.aiortcOffer, type: .offer)
    let answer = try SessionDescription.answer(to: offer, config(direction: .receiveOnly))
    let video = answer.media[0]
    #expect(video.payloadTypes == [97, 101])
    // aiortc lists nack and nack pli but not ccm fir.
    #expect(video.codecs[0].feedback == [.nack, .pictureLossIndication])
    #expect(answer.direction(for: video) == .receiveOnly)
    #expect(answer.media[1].isRejected && answer.media[1].transportProtocol == "DTLS/SCTP")
}

@Test func answerWithoutDTLSToPlainOffer() throws {
    let offer = SessionDescription.silentVideoOffer(config(dtls: false))
    let answer = try SessionDescription.answer(to: offer, config(dtls: false, seed: 3))
    let video = answer.media[0]
    #expect(video.transportProtocol == "RTP/AVPF")
    #expect(answer.setupRole(for: video) == nil && answer.fingerprints(for: video).isEmpty)
}

@Test func answerFollowsOfferedSetupRole() throws {
    for (offered, expected) in [(DTLSSetupRole.active, DTLSSetupRole.passive), (.passive, .active)] {
        var offer = SessionDescription.silentVideoOffer(config())
        offer.media[0].attributes = offer.media[0].attributes.map {
            $0 == .setup(.activePassive) ? .setup(offered) : $0
        }
        let answer = try SessionDescription.answer(to: offer, config(answerRole: .passive))
        #expect(answer.setupRole(for: answer.media[0]) == expected)
    }
}

@Test func answerWithoutMidOrBundleOmitsThem() throws {
    var offer = SessionDescription.silentVideoOffer(config())
    offer.attributes = []
    offer.media[0].attributes.removeAll { $0 == .mid("0") || $0 == .rtcpMux }
    let answer = try SessionDescription.answer(to: offer, config())
    #expect(answer.bundleGroup == nil)
    #expect(answer.media[0].mid == nil)
    #expect(!answer.media[0].isRTCPMultiplexed)
}

private func negotiationError(_ offer: SessionDescription, _ settings: SilentVideoConfiguration) -> SDPNegotiationError?
{
    do {
        _ = try SessionDescription.answer(to: offer, settings)
        return nil
    } catch {
        return error
    }
}

@Test func answerErrors() throws {
    let offer = SessionDescription.silentVideoOffer(config())

    var notOffer = offer
    notOffer.type = .answer
    #expect(negotiationError(notOffer, config())?.kind == .notAnOffer)

    var audioOnly = offer
    audioOnly.media[0].kind = .audio
    #expect(negotiationError(audioOnly, config())?.kind == .noVideoSection)

    var rejected = offer
    rejected.media[0].port = 0
    #expect(negotiationError(rejected, config())?.kind == .noVideoSection)

    #expect(negotiationError(offer, config(dtls: false))?.kind == .transportMismatch)
    #expect(
        negotiationError(SessionDescription.silentVideoOffer(config(dtls: false)), config())?.kind == .transportMismatch
    )

    var vp9Only = config()
    vp9Only.codecs = [RTPCodec(payloadType: 98, name: "VP9", clockRate: 90_000)]
    let noCommon = negotiationError(SessionDescription.silentVideoOffer(vp9Only), config())
    #expect(noCommon?.kind == .noCommonCodec)
    #expect(noCommon?.description == "cannot answer the offer: the video section offers only VP9")

    var noCredentials = offer
    noCredentials.media[0].attributes.removeAll { if case .icePassword = $0 { true } else { false } }
    #expect(negotiationError(noCredentials, config())?.kind == .missingICECredentials)

    var noFingerprint = offer
    noFingerprint.media[0].attributes.removeAll { if case .fingerprint = $0 { true } else { false } }
    #expect(negotiationError(noFingerprint, config())?.kind == .missingFingerprint)

    var hold = offer
    hold.media[0].attributes = hold.media[0].attributes.map {
        $0 == .setup(.activePassive) ? .setup(.holdConnection) : $0
    }
    #expect(negotiationError(hold, config())?.kind == .invalidSetupRole)
}

@Test func h264MatchingNeedsSameModeAndProfile() {
    let ours = RTPCodec.h264()
    #expect(ours.isCompatible(with: .h264(payloadType: 120, profileLevelID: "42E034")))
    #expect(!ours.isCompatible(with: .h264(profileLevelID: "42001f")))
    #expect(!ours.isCompatible(with: .h264(profileLevelID: "640c1f")))
    let modeZero = RTPCodec(
        payloadType: 97, name: "h264", clockRate: 90_000,
        formatParameters: "profile-level-id=42e01f;level-asymmetry-allowed=1")
    #expect(!ours.isCompatible(with: modeZero))
    #expect(RTPCodec.vp8().isCompatible(with: RTPCodec(payloadType: 1, name: "vp8", clockRate: 90_000)))
    #expect(!RTPCodec.vp8().isCompatible(with: RTPCodec(payloadType: 1, name: "VP8", clockRate: 48_000)))
}

@Test func directionAnswering() {
    // RFC 3264 §6.1: answerer wants sendrecv.
    #expect(MediaDirection.sendReceive.answering(.sendReceive) == .sendReceive)
    #expect(MediaDirection.sendReceive.answering(.sendOnly) == .receiveOnly)
    #expect(MediaDirection.sendReceive.answering(.receiveOnly) == .sendOnly)
    #expect(MediaDirection.sendReceive.answering(.inactive) == .inactive)
    #expect(MediaDirection.sendOnly.answering(.sendOnly) == .inactive)
    #expect(MediaDirection.receiveOnly.answering(.sendReceive) == .receiveOnly)
    #expect(MediaDirection.sendOnly.reversed == .receiveOnly)
}

@Test func setupRoleAnswering() {
    #expect(DTLSSetupRole.activePassive.answerRole() == .active)
    #expect(DTLSSetupRole.activePassive.answerRole(preferring: .passive) == .passive)
    #expect(DTLSSetupRole.activePassive.answerRole(preferring: .holdConnection) == .active)
    #expect(DTLSSetupRole.active.answerRole() == .passive)
    #expect(DTLSSetupRole.passive.answerRole(preferring: .passive) == .active)
    #expect(DTLSSetupRole.holdConnection.answerRole() == nil)
}
