// The browsers' SDP dialect against real descriptions (Fixtures/sdp/): every fixture parses and
// prints back; our answers to aiortc and Chromium offers reject what we do not take, pick the
// codecs and RTX formats at the offer's payload types; aiortc's answers to our offers say which
// codec, RTX and sources it took.
import Testing
import ZoneCore

@testable import SDP
@testable import Signaling

@Suite struct BrowserDialectTests {
    private func answer(_ name: String, direction: MediaDirection = .sendReceive) throws -> SessionDescription {
        try SessionDescription.answer(
            to: SDPFixtureFiles.parse(name), SDPFixtureFiles.webRTCConfiguration(direction: direction, seed: 7))
    }

    private func rtx(_ payloadType: UInt8, apt: UInt8) -> RTPCodec {
        .retransmission(payloadType: payloadType, associatedPayloadType: apt)
    }

    @Test func theFixturesAreThere() {
        #expect(SDPFixtureFiles.names.count == 12)
    }

    @Test(arguments: SDPFixtureFiles.names)
    func everyFixtureParsesPrintsBackAndHasVideo(name: String) throws {
        let description = try SDPFixtureFiles.parse(name)
        let reparsed = try SessionDescription(parsing: description.description, type: description.type)
        #expect(reparsed == description)
        let video = try RemoteVideoDescription(description)
        #expect(video.security == .dtlsSRTP)
        #expect(!video.codecs.isEmpty && video.codecs.allSatisfy { !$0.isRetransmission })
        // Every stack here pairs each video codec with an RTX format (FEC formats have none).
        let repairable = video.codecs.filter { !["ulpfec", "flexfec-03"].contains($0.name.lowercased()) }
        #expect(Set(video.retransmissionPayloadTypes.keys) == Set(repairable.map(\.payloadType)))
        // A section that sends names its source and RTX source (aiortc names them even when it
        // does not send; Chromium only when it does).
        if video.direction.sends || name.hasPrefix("aiortc") {
            #expect(video.ssrc != nil && video.retransmissionSSRC != nil && video.ssrc != video.retransmissionSSRC)
        } else {
            #expect(video.ssrc == nil && video.retransmissionSSRC == nil)
        }
        #expect(!video.fingerprints.isEmpty && video.iceCredentials != nil)
    }

    @Test(arguments: SDPFixtureFiles.ourOffers.map(\.name))
    func ourOffersAreTheFixturesAiortcAnswered(name: String) throws {
        let configuration = try #require(SDPFixtureFiles.ourOffers.first { $0.name == name }?.configuration)
        #expect(SessionDescription.silentVideoOffer(configuration).description == (try SDPFixtureFiles.text(name)))
    }

    @Test func ourWebRTCOfferPairsEachCodecWithRTX() throws {
        let offer = try SDPFixtureFiles.parse("zonertc-offer-sendonly-vp8.sdp")
        let video = try #require(offer.media.first)
        #expect(video.transportProtocol == "UDP/TLS/RTP/SAVPF" && video.allowsReducedSizeRTCP)
        #expect(video.codecs == [.vp8(), rtx(98, apt: 96), .h264(), rtx(99, apt: 97)])
        let source = try #require(SDPFixtureFiles.ourOffers[0].configuration.source)
        #expect(video.sendingSources?.ssrc == source.ssrc)
        #expect(video.sendingSources?.retransmissionSSRC == source.retransmissionSSRC)
        #expect(video.mediaStreamIdentification?.streamID == source.streamID)
        #expect(offer.setupRole(for: video) == .activePassive)
    }

    @Test func answerToAiortcAudioVideoAndDataChannel() throws {
        let answer = try answer("aiortc-offer-audio-video-data.sdp")
        #expect(answer.media.count == 3)
        let (audio, video, data) = (answer.media[0], answer.media[1], answer.media[2])
        // RFC 8829 §5.3.1 / RFC 8843 §7.3.3: rejected sections have port 0, keep their mid, and
        // leave the BUNDLE group.
        #expect(audio.isRejected && audio.mid == "0" && audio.lines[0] == "m=audio 0 UDP/TLS/RTP/SAVPF 96 9 0 8")
        #expect(data.isRejected && data.mid == "2"
            && data.lines[0] == "m=application 0 UDP/DTLS/SCTP webrtc-datachannel")
        #expect(answer.bundleGroup == ["1"])
        #expect(!video.isRejected && video.mid == "1")
        // VP8 and the constrained-baseline H.264 at aiortc's payload types, each with its RTX;
        // the baseline H.264 (99/100) is declined; no header extensions.
        #expect(video.payloadTypes == [97, 98, 101, 102])
        #expect(video.codecs.map(\.associatedPayloadType) == [nil, 97, nil, 101])
        #expect(video.codecs[0].feedback == [.nack, .pictureLossIndication])
        #expect(!video.attributes.contains { $0.name == "extmap" })
        #expect(answer.setupRole(for: video) == .active)
        #expect(answer.direction(for: video) == .sendReceive)
        #expect(video.sendingSources != nil)
        #expect(try SessionDescription(parsing: answer.description, type: .answer) == answer)
    }

    @Test func answerToAiortcRecvonlySendsOnly() throws {
        let answer = try answer("aiortc-offer-video-recvonly.sdp")
        let video = try #require(answer.media.first)
        #expect(answer.direction(for: video) == .sendOnly)
        let remote = try RemoteVideoDescription(answer)
        #expect(remote.ssrc == SDPFixtureFiles.webRTCConfiguration(direction: .sendReceive, seed: 7).source?.ssrc)
        #expect(remote.retransmissionPayloadTypes == [97: 98, 101: 102])
    }

    @Test func answerWeOnlyReceiveHasNoSourceLines() throws {
        let answer = try answer("aiortc-offer-video-sendrecv.sdp", direction: .receiveOnly)
        let video = try #require(answer.media.first)
        #expect(answer.direction(for: video) == .receiveOnly)
        #expect(video.sendingSources == nil && video.mediaStreamIdentification == nil)
    }

    @Test func answerToAiortcH264Only() throws {
        let answer = try answer("aiortc-offer-h264-only.sdp")
        let video = try #require(answer.media.first)
        #expect(video.payloadTypes == [101, 102])
        #expect(video.codecs[0].name == "H264" && video.codecs[0].formatParameter("profile-level-id") == "42e01f")
        #expect(video.codecs[1].associatedPayloadType == 101)
    }

    @Test func answerToChromium() throws {
        let answer = try answer("chromium-offer-audio-video-data.sdp")
        #expect(answer.media.map(\.isRejected) == [true, false, true])
        #expect(answer.media.map(\.mid) == ["0", "1", "2"])
        #expect(answer.media[2].lines[0] == "m=application 0 UDP/DTLS/SCTP webrtc-datachannel")
        #expect(answer.bundleGroup == ["1"])
        let video = answer.media[1]
        // VP8 96 + RTX 97; of Chromium's five H.264 formats only Constrained Baseline in
        // packetization mode 1 (108) + RTX 109. VP9, AV1, Baseline, Main, mode 0, red, ulpfec
        // and flexfec are declined; no header extensions.
        #expect(video.payloadTypes == [96, 97, 108, 109])
        #expect(video.codecs.map(\.feedback) == [RTPCodec.videoFeedback, [], RTPCodec.videoFeedback, []])
        #expect(video.allowsReducedSizeRTCP)
        #expect(!video.attributes.contains { $0.name == "extmap" })
        #expect(answer.setupRole(for: video) == .active)
        #expect(answer.direction(for: video) == .sendReceive && video.sendingSources != nil)
        #expect(try SessionDescription(parsing: answer.description, type: .answer) == answer)
    }

    @Test func answerToChromiumRecvonly() throws {
        let answer = try answer("chromium-offer-video-recvonly.sdp")
        let video = try #require(answer.media.first)
        #expect(answer.direction(for: video) == .sendOnly)
        #expect(video.payloadTypes == [96, 97, 108, 109])
        let remote = try RemoteVideoDescription(answer)
        #expect(remote.retransmissionPayloadTypes == [96: 97, 108: 109])
        #expect(remote.ssrc != nil && remote.retransmissionSSRC != nil)
    }

    @Test func chromiumAnswersToOurOffers() throws {
        let vp8 = try RemoteVideoDescription(SDPFixtureFiles.parse("chromium-answer-to-zonertc-vp8.sdp"))
        #expect(vp8.direction == .receiveOnly && vp8.ssrc == nil)
        #expect(vp8.codecs.map(\.payloadType) == [96, 97] && vp8.retransmissionPayloadTypes == [96: 98, 97: 99])
        #expect(vp8.codecs[0].feedback.contains(.nack) && vp8.reducedSizeRTCP)
        #expect(vp8.setupRole == .active && vp8.localRoleForAnswer == .passive)
        let h264 = try RemoteVideoDescription(SDPFixtureFiles.parse("chromium-answer-to-zonertc-h264.sdp"))
        #expect(h264.direction == .sendReceive)
        #expect(h264.codecs.first?.name == "H264" && h264.codecs.first?.payloadType == 97)
        #expect(h264.codec(matching: .h264())?.formatParameter("profile-level-id") == "42e01f")
        #expect(h264.retransmissionPayloadType(for: 97) == 98)
        #expect(h264.ssrc != nil && h264.retransmissionSSRC != nil && h264.cname != nil)
    }

    @Test func aiortcAnswerToOurVP8Offer() throws {
        let remote = try RemoteVideoDescription(SDPFixtureFiles.parse("aiortc-answer-to-zonertc-vp8.sdp"))
        #expect(remote.mid == "0" && remote.direction == .receiveOnly)
        #expect(remote.codecs.first?.name == "VP8" && remote.codecs.first?.payloadType == 96)
        #expect(remote.codec(matching: .vp8())?.payloadType == 96)
        #expect(remote.codec(matching: .h264())?.payloadType == 97)
        #expect(remote.retransmissionPayloadType(for: 96) == 98)
        #expect(remote.retransmissionPayloadType(for: 97) == 99)
        #expect(remote.ssrc == 3_380_947_036 && remote.retransmissionSSRC == 3_273_595_987)
        #expect(remote.cname == "bfe86509-7aba-4eed-853a-2188f8677135")
        #expect(remote.setupRole == .active && remote.localRoleForAnswer == .passive)
        #expect(remote.fingerprints.map(\.hashFunction) == ["sha-256", "sha-384", "sha-512"])
    }

    @Test func aiortcAnswerToOurH264Offer() throws {
        let remote = try RemoteVideoDescription(SDPFixtureFiles.parse("aiortc-answer-to-zonertc-h264.sdp"))
        #expect(remote.direction == .sendReceive)
        #expect(remote.codecs.map(\.payloadType) == [97, 96])
        #expect(remote.codecs.first?.name == "H264")
        #expect(remote.retransmissionPayloadTypes == [97: 98, 96: 99])
        #expect(remote.ssrc == 3_103_753_928 && remote.retransmissionSSRC == 10_146_166)
    }

    // MARK: What the remote may get wrong

    private func aiortcAnswer(replacing old: String, with new: String) throws -> SessionDescription {
        let text = try SDPFixtureFiles.text("aiortc-answer-to-zonertc-vp8.sdp")
        #expect(text.contains(old))
        return try SessionDescription(parsing: text.replacingOccurrences(of: old, with: new), type: .answer)
    }

    @Test func answerSayingActpassIsRefused() throws {
        let answer = try aiortcAnswer(replacing: "a=setup:active", with: "a=setup:actpass")
        #expect(throws: SDPNegotiationError(
            kind: .invalidSetupRole, detail: "an answer must say a=setup:active or passive, not actpass")) {
            try RemoteVideoDescription(answer)
        }
    }

    @Test func passiveAnswerMakesUsActive() throws {
        let answer = try aiortcAnswer(replacing: "a=setup:active", with: "a=setup:passive")
        #expect(try RemoteVideoDescription(answer).localRoleForAnswer == .active)
    }

    @Test func hostileRTXAndSourceLinesAreLeftOut() throws {
        var answer = try aiortcAnswer(replacing: "a=fmtp:98 apt=96", with: "a=fmtp:98 apt=300")
        #expect(try RemoteVideoDescription(answer).retransmissionPayloadTypes == [97: 99])
        answer = try aiortcAnswer(replacing: "a=fmtp:98 apt=96", with: "a=fmtp:98 apt=55")
        #expect(try RemoteVideoDescription(answer).retransmissionPayloadTypes == [97: 99])
        answer = try aiortcAnswer(replacing: "a=fmtp:98 apt=96", with: "a=fmtp:98 apt=98")
        #expect(try RemoteVideoDescription(answer).retransmissionPayloadTypes == [97: 99])
        answer = try aiortcAnswer(
            replacing: "a=ssrc-group:FID 3380947036 3273595987", with: "a=ssrc-group:FID 3380947036 3380947036")
        var remote = try RemoteVideoDescription(answer)
        #expect(remote.ssrc == 3_380_947_036 && remote.retransmissionSSRC == nil)
        answer = try aiortcAnswer(
            replacing: "a=ssrc-group:FID 3380947036 3273595987", with: "a=ssrc-group:FID 3380947036 99999999999")
        remote = try RemoteVideoDescription(answer)
        #expect(remote.retransmissionSSRC == nil)
        #expect(SourceAttribute(attributeValue: "-1 cname:x") == nil)
        #expect(SourceAttribute(attributeValue: "4294967296 cname:x") == nil)
        #expect(SourceAttribute(attributeValue: "4294967295 cname:x")?.ssrc == .max)
        #expect(SourceGroup(attributeValue: "FID") == nil)
        #expect(MediaStreamIdentification(attributeValue: "a b c") == nil)
    }

    @Test func plainRTPAnswerCarriesNoDTLS() throws {
        var config = SDPFixtureFiles.webRTCConfiguration(direction: .sendReceive)
        config.dtls = nil
        let offer = SessionDescription.silentVideoOffer(config)
        let remote = try RemoteVideoDescription(offer)
        #expect(remote.security == .none && remote.localRoleForAnswer == nil)
        #expect(MediaSecurity(transportProtocol: "UDP/DTLS/SCTP") == nil)
        #expect(MediaSecurity(transportProtocol: "RTP/SAVPF") == .dtlsSRTP)
        #expect(MediaSecurity.dtlsSRTP.dialect == .webRTC && MediaSecurity.none.dialect == .zonertc)
    }

    @Test func rtxPayloadTypesAvoidTakenOnes() {
        let codecs: [RTPCodec] = [.vp8(payloadType: 96), .h264(payloadType: 98)]
        #expect(codecs.withRetransmission().map(\.payloadType) == [96, 97, 98, 99])
        // Already paired codecs keep their RTX; every dynamic type taken: the 35–63 range.
        let paired = [RTPCodec.vp8(), rtx(100, apt: 96)].withRetransmission()
        #expect(paired.map(\.payloadType) == [96, 100])
        let crowded = (96...127).map { RTPCodec(payloadType: UInt8($0), name: "X\($0)", clockRate: 90_000) }
        #expect(crowded.withRetransmission()[1] == rtx(35, apt: 96))
    }
}

@Suite struct H264ProfileLevelIDTests {
    @Test func profilesByRFC6184Table5() {
        func profile(_ text: String) -> H264ProfileLevelID.Profile? { H264ProfileLevelID(text)?.profile }
        #expect(profile("42e01f") == .constrainedBaseline)
        #expect(profile("42C01F") == .constrainedBaseline)
        #expect(profile("4d801f") == .constrainedBaseline)
        #expect(profile("58c01f") == .constrainedBaseline)
        #expect(profile("42001f") == .baseline)
        #expect(profile("58801f") == .baseline)
        #expect(profile("4d001f") == .main)
        #expect(profile("58001f") == .extended)
        #expect(profile("64001f") == .high)
        #expect(profile("640c1f") == .constrainedHigh)
        #expect(profile("42e11f") == nil)  // a reserved bit set
        #expect(profile("ff001f") == nil)
        #expect(H264ProfileLevelID("42e01") == nil)
        #expect(H264ProfileLevelID("42e01g") == nil)
        #expect(H264ProfileLevelID("42e01f0") == nil)
        #expect(H264ProfileLevelID("é2e01f") == nil)
    }

    @Test func compatibilityFollowsTheProfileNotTheDigits() {
        let ours = RTPCodec.h264()
        #expect(ours.isCompatible(with: .h264(profileLevelID: "42c034")))
        #expect(ours.isCompatible(with: .h264(profileLevelID: "4d800d")))
        #expect(!ours.isCompatible(with: .h264(profileLevelID: "42e0zz")))
        // No profile-level-id means 42000a: Baseline, not Constrained Baseline (RFC 6184 §8.1).
        let bare = RTPCodec(payloadType: 97, name: "H264", clockRate: 90_000, formatParameters: "packetization-mode=1")
        #expect(!ours.isCompatible(with: bare))
    }

    @Test func answerLevelByRFC6184Section822() throws {
        let ours = try #require(H264ProfileLevelID("42e01f"))
        let offered = try #require(H264ProfileLevelID("42c00d"))
        // Both allow asymmetry: our own level (what we can receive), in the offer's profile bytes.
        #expect(ours.answering(offered, levelAsymmetryAllowed: true)?.description == "42c01f")
        // Otherwise no higher than the offer.
        #expect(ours.answering(offered, levelAsymmetryAllowed: false)?.description == "42c00d")
        #expect(offered.answering(ours, levelAsymmetryAllowed: false)?.description == "42e00d")
        #expect(ours.answering(try #require(H264ProfileLevelID("42001f")), levelAsymmetryAllowed: true) == nil)
        // Level 1b: constraint_set3 with level_idc 11 sits below level 1.1.
        let level1b = try #require(H264ProfileLevelID("42f00b"))
        #expect(level1b.isLevel1b && level1b.profile == .constrainedBaseline)
        #expect(ours.answering(level1b, levelAsymmetryAllowed: false)?.description == "42f00b")
        #expect(level1b.answering(ours, levelAsymmetryAllowed: false)?.description == "42f00b")
    }

    @Test func codecAnswerRewritesOnlyTheLevel() {
        let ours = RTPCodec.h264()
        let offered = RTPCodec(
            payloadType: 102, name: "H264", clockRate: 90_000,
            formatParameters: "packetization-mode=1;profile-level-id=42e00d", feedback: [.nack])
        let answered = ours.answering(offered)
        #expect(answered.payloadType == 102 && answered.feedback == [.nack])
        #expect(answered.formatParameters
            == "level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e00d")
        #expect(ours.answering(.h264(payloadType: 106)) == .h264(payloadType: 106))
    }
}
