import Testing
import ZoneCore

@testable import SDP
@testable import Signaling

// MARK: - Real-stack offers

@Test(arguments: Fixtures.offers.map(\.name))
func realStackOfferRoundTrips(name: String) throws {
    let text = try #require(Fixtures.offers.first { $0.name == name }).text
    let offer = try SessionDescription(parsing: text, type: .offer)
    let printed = offer.description
    #expect(printed.hasSuffix("\r\n"))
    #expect(try SessionDescription(parsing: printed, type: .offer) == offer)
    // The same text with the other line ending parses to the same description.
    let lf = text.replacingOccurrences(of: "\r\n", with: "\n")
    let crlf = lf.replacingOccurrences(of: "\n", with: "\r\n")
    #expect(try SessionDescription(parsing: lf, type: .offer) == offer)
    #expect(try SessionDescription(parsing: crlf, type: .offer) == offer)
    // The text is written straight into one string: the same as the lines, each ended by CRLF.
    #expect(printed == offer.lines.map { $0 + "\r\n" }.joined())
}

/// A transport protocol is RTP when one of its `/`-separated pieces is RTP, in any case.
@Test(arguments: [("RTP/AVP", true), ("UDP/TLS/RTP/SAVPF", true), ("udp/tls/rtp/savpf", true), ("rtp", true),
                  ("TCP/DTLS/RTP/SAVPF", true), ("UDP//RTP", true), ("UDP/DTLS/SCTP", false), ("RTPX/AVP", false),
                  ("XRTP/AVP", false), ("RT/P", false), ("RTP ", false), ("", false), ("/", false), ("UDP/RT", false)])
func rtpProfilesAreRecognized(text: String, isRTP: Bool) {
    #expect(MediaDescription.isRTPProtocol(text) == isRTP)
}

@Test func chromeOfferPrintsBackByteForByte() throws {
    let offer = try SessionDescription(parsing: Fixtures.chromeOffer, type: .offer)
    #expect(offer.description == Fixtures.chromeOffer)
}

@Test func aiortcOfferPrintsBackWithCRLF() throws {
    let offer = try SessionDescription(parsing: Fixtures.aiortcOffer, type: .offer)
    #expect(offer.description == Fixtures.aiortcOffer.replacingOccurrences(of: "\n", with: "\r\n"))
}

@Test func chromeOfferAccessors() throws {
    let offer = try SessionDescription(parsing: Fixtures.chromeOffer, type: .offer)
    #expect(offer.type == .offer)
    #expect(offer.origin == SDPOrigin(sessionID: 4_772_484_948_258_786_213, sessionVersion: 2))
    #expect(offer.sessionName == "-")
    #expect(offer.timing == [.unbounded])
    #expect(offer.bundleGroup == ["0", "1", "2"])
    #expect(offer.attributes.contains(.other(name: "extmap-allow-mixed", value: nil)))
    #expect(
        offer.attributes.contains(.other(name: "msid-semantic", value: " WMS 15fc899e-4fd5-4dbe-bbdc-968b7afb2c68")))
    #expect(offer.media.map(\.kind) == [.audio, .video, .application])
    #expect(offer.media.map(\.mid) == ["0", "1", "2"])

    let audio = offer.media[0]
    #expect(audio.candidates.count == 3)
    #expect(audio.candidates[0].address.isMDNS)
    #expect(audio.candidates[2].tcpType == .active)
    #expect(!offer.endOfCandidates(for: audio))
    #expect(
        audio.codecs.map(\.name) == ["opus", "red", "G722", "PCMU", "PCMA", "CN", "telephone-event", "telephone-event"])
    #expect(audio.codecs[0].channels == 2 && audio.codecs[0].formatParameter("useinbandfec") == "1")
    #expect(audio.codecs[0].feedback == [RTCPFeedback(type: "transport-cc")])

    let video = try #require(offer.media(withMid: "1"))
    let credentials = ICECredentials(usernameFragment: "dMlH", password: "UvTCQCyEZDz/TddJ8HyS5SUk")
    #expect(offer.iceCredentials(for: video) == credentials)
    #expect(offer.iceOptions(for: video) == ["trickle"])
    #expect(offer.direction(for: video) == .sendOnly)
    #expect(offer.setupRole(for: video) == .activePassive)
    #expect(offer.fingerprints(for: video).first?.hashFunction == "sha-256")
    #expect(offer.fingerprints(for: video).first?.digest.count == 32)
    #expect(video.isRTCPMultiplexed)
    #expect(video.bandwidths == [SDPBandwidth(type: "AS", value: 2500)])
    #expect(video.payloadTypes == [96, 97, 102, 103, 106, 107, 98, 99, 45, 46, 116, 117, 118])
    let codecs = video.codecs
    #expect(
        codecs.map(\.name) == [
            "VP8", "rtx", "H264", "rtx", "H264", "rtx", "VP9", "rtx", "AV1", "rtx", "red", "rtx", "ulpfec",
        ])
    let h264 = try #require(video.codec(payloadType: 106))
    #expect(h264 == codecs[4])
    #expect(video.codec(payloadType: 100) == nil)
    #expect(h264.payloadType == 106 && h264.clockRate == 90_000)
    #expect(h264.formatParameter("profile-level-id") == "42e01f")
    #expect(h264.formatParameter("packetization-mode") == "1")
    #expect(h264.feedback.contains(.pictureLossIndication) && h264.feedback.contains(.fullIntraRequest))
    #expect(codecs[1].formatParameter("apt") == "96")
    #expect(video.attributes.contains(.other(name: "simulcast", value: "send h;m;l")))
    #expect(video.attributes.contains(.other(name: "rid", value: "h send")))

    let data = offer.media[2]
    #expect(!data.isRTP && data.codecs.isEmpty)
    #expect(data.formats == ["webrtc-datachannel"])
    #expect(data.transportProtocol == "UDP/DTLS/SCTP")
    #expect(data.attributes.contains(.other(name: "sctp-port", value: "5000")))
}

@Test func firefoxOfferAccessors() throws {
    let offer = try SessionDescription(parsing: Fixtures.firefoxOffer, type: .offer)
    #expect(offer.origin.username == "mozilla...THIS_IS_SDPARTA-128.0")
    #expect(offer.origin.address == "0.0.0.0")
    #expect(offer.bundleGroup == ["0", "1"])
    let audio = offer.media[0]
    let video = offer.media[1]
    // Fingerprint and ice-options live at session level in Firefox's offers.
    #expect(video.explicitFingerprints.isEmpty)
    #expect(offer.fingerprints(for: video).count == 1)
    #expect(video.iceOptions.isEmpty && offer.iceOptions(for: video) == ["trickle"])
    #expect(offer.iceCredentials(for: video)?.usernameFragment == "26934b48")
    #expect(offer.endOfCandidates(for: audio) && !offer.endOfCandidates(for: video))
    #expect(audio.candidates.map(\.transport) == [.udp, .tcp, .udp])
    #expect(video.candidates.isEmpty)
    // fmtp comes before rtpmap in Firefox's alphabetical order; codecs pair them anyway.
    let vp8 = try #require(video.codecs.first)
    #expect(vp8.name == "VP8" && vp8.payloadType == 120 && vp8.formatParameter("max-fs") == "12288")
    #expect(
        vp8.feedback == [
            .nack, .pictureLossIndication, .fullIntraRequest, .init(type: "goog-remb"), .init(type: "transport-cc"),
        ])
    #expect(audio.codecs.first { $0.payloadType == 9 }?.channels == 1)
    #expect(video.attributes.contains(.other(name: "ssrc-group", value: "FID 1502340891 3017411285")))
}

@Test func aiortcOfferAccessors() throws {
    let offer = try SessionDescription(parsing: Fixtures.aiortcOffer, type: .offer)
    let video = offer.media[0]
    let data = offer.media[1]
    #expect(video.port == 55702)
    #expect(video.connection == SDPConnection(address: "192.168.1.40"))
    #expect(offer.fingerprints(for: video).map(\.hashFunction) == ["sha-256", "sha-512"])
    #expect(offer.fingerprints(for: video)[1].digest.count == 64)
    #expect(offer.endOfCandidates(for: video))
    #expect(video.candidates.count == 3)
    #expect(video.candidates[1].address.ipAddress?.family == .ipv6)
    #expect(video.codecs.filter { $0.name == "H264" }.map(\.payloadType) == [99, 101])
    #expect(data.formats == ["5000"] && data.transportProtocol == "DTLS/SCTP")
    #expect(data.attributes.contains(.other(name: "sctpmap", value: "5000 webrtc-datachannel 65535")))
    #expect(
        offer.iceCredentials(for: data) == ICECredentials(usernameFragment: "yBdG", password: "BLEPH1qhT61qtc4xatws8p"))
}

// MARK: - Less common but valid forms

@Test func sessionLevelValuesAreFallbacks() throws {
    let text = Fixtures.crlf(
        """
        v=0
        o=alice 1 1 IN IP6 ::1
        s=A call
        i=the first call
        c=IN IP4 203.0.113.1
        b=CT:1000
        t=3034423619 3042462419
        r=604800 3600 0 90000
        k=prompt
        x=an unknown line type
        a=ice-ufrag:sEsS
        a=ice-pwd:sessionpasswordsession1
        a=fingerprint:SHA-256 A5:4D:CA:18:25:30:BB:1D:6D:13:2C:DE:D6:23:7B:2E:\
        D9:1E:3F:72:1F:CB:19:71:17:44:94:D6:49:3C:9D:5C
        a=setup:passive
        a=recvonly
        a=end-of-candidates
        a=ice-lite
        m=video 5004/2 RTP/AVPF 96
        i=the camera
        k=clear:secret
        a=rtpmap:96 VP8/90000
        a=rtcp-fb:* nack
        a=rtcp-fb:* trr-int  100
        m=audio 0 RTP/AVP 0
        """)
    let description = try SessionDescription(parsing: text, type: .answer)
    #expect(description.type == .answer)
    #expect(description.sessionName == "A call")
    #expect(description.connection == SDPConnection(address: "203.0.113.1"))
    #expect(description.bandwidths == [SDPBandwidth(type: "CT", value: 1000)])
    #expect(description.timing == [SDPTiming(start: 3_034_423_619, stop: 3_042_462_419)])
    #expect(description.otherLines.map(\.type) == ["i", "r", "k", "x"])
    #expect(description.isICELite)
    #expect(description.sessionICECredentials?.usernameFragment == "sEsS")
    let video = description.media[0]
    #expect(video.portCount == 2)
    #expect(video.otherLines == [SDPLine(type: "i", value: "the camera"), SDPLine(type: "k", value: "clear:secret")])
    #expect(description.iceCredentials(for: video)?.password == "sessionpasswordsession1")
    #expect(description.direction(for: video) == .receiveOnly)
    #expect(description.setupRole(for: video) == .passive)
    #expect(description.fingerprints(for: video).first?.hashFunction == "sha-256")
    #expect(description.endOfCandidates(for: video))
    #expect(video.codecs.first?.feedback == [.nack, RTCPFeedback(type: "trr-int", parameter: "100")])
    let audio = description.media[1]
    #expect(audio.isRejected)
    #expect(audio.codecs == [RTPCodec(payloadType: 0, name: "PCMU", clockRate: 8_000)])
    #expect(try SessionDescription(parsing: description.description, type: .answer) == description)
}

@Test func keptLinesPrintInRFCOrder() throws {
    // i= after t= is out of RFC order; the parser keeps it and the printer moves it back.
    let text = "v=0\no=- 1 1 IN IP4 0.0.0.0\ns=-\nt=0 0\nk=prompt\ni=info\nm=video 9 RTP/AVPF 96\nk=x\ni=y\n"
    let description = try SessionDescription(parsing: text, type: .offer)
    #expect(
        description.lines == [
            "v=0", "o=- 1 1 IN IP4 0.0.0.0", "s=-", "i=info", "t=0 0", "k=prompt", "m=video 9 RTP/AVPF 96", "i=y",
            "k=x",
        ])
    #expect(try SessionDescription(parsing: description.description, type: .offer) == description)
}

@Test func trailingBlankLinesAndNoFinalLineBreakAreFine() throws {
    let base = "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0"
    let plain = try SessionDescription(parsing: base, type: .offer)
    #expect(try SessionDescription(parsing: base + "\r\n\r\n\n", type: .offer) == plain)
    #expect(plain.media.isEmpty)
}

@Test func rejectedSectionWithBundleOnlyIsNotRejected() throws {
    let text = "v=0\no=- 1 1 IN IP4 0.0.0.0\ns=-\nt=0 0\nm=video 0 UDP/TLS/RTP/SAVPF 96\na=bundle-only\n"
    let description = try SessionDescription(parsing: text, type: .offer)
    #expect(!description.media[0].isRejected)
}

@Test func fingerprintOfCertificate() throws {
    let fingerprint = DTLSFingerprint.sha256(certificateDER: Array("abc".utf8))
    #expect(
        fingerprint.description
            == "sha-256 BA:78:16:BF:8F:01:CF:EA:41:41:40:DE:5D:AE:22:23:B0:03:61:A3:96:17:7A:9C:B4:10:FF:61:F2:00:15:AD"
    )
}

/// A payload type listed twice on the `m=` line is one codec, at its first place; one with neither
/// rtpmap nor static type stays out however often it is listed.
@Test func payloadTypesListedTwiceCountOnce() {
    let video = MediaDescription(
        kind: .video, transportProtocol: "UDP/TLS/RTP/SAVPF", formats: ["100", "96", "100", "0", "96", "0"],
        attributes: [.rtpMap(payloadType: 96, encodingName: "VP8", clockRate: 90_000, channels: nil)])
    #expect(video.codecs.map(\.payloadType) == [96, 0])
    #expect(video.codecs.map(\.name) == ["VP8", "PCMU"])
}
