// The plain-RTP SDP: what we write must be what ffmpeg reads (m=, c=, rtpmap, fmtp), what
// ffmpeg writes must be what we read, and an SDP we cannot use must say which line is wrong.

import Testing
@testable import Media

@Suite("Plain RTP session descriptions")
struct RTPStreamDescriptionTests {
    @Test func readsWhatFFmpegWrites() throws {
        let vp8 = try RTPStreamDescription(parsing: String(decoding: try Fixture.bytes("rtp/vp8.sdp"), as: UTF8.self))
        #expect(vp8 == RTPStreamDescription(address: "127.0.0.1", port: 40100, payloadType: 96, codec: .vp8))
        #expect(vp8.effectiveRTCPPort == 40101)
        let h264 = try RTPStreamDescription(parsing: String(decoding: try Fixture.bytes("rtp/h264.sdp"), as: UTF8.self))
        #expect(h264.codec == .h264 && h264.payloadType == 97 && h264.port == 40102)
    }

    @Test func writesWhatItReads() throws {
        let format = try VideoStreamFormat(attributeValue: "ivf VP80 320x240 1/30")
        let description = RTPStreamDescription(address: "127.0.0.1", port: 5004, payloadType: 96, codec: .vp8,
                                               ssrc: 1234, format: format, timestampOrigin: 99,
                                               firstSequenceNumber: 65530)
        let text = description.text
        #expect(text.contains("m=video 5004 RTP/AVP 96\n") && text.contains("a=rtpmap:96 VP8/90000\n"))
        #expect(text.contains("c=IN IP4 127.0.0.1\n"))
        #expect(try RTPStreamDescription(parsing: text) == description)
        // CRLF endings, RTCP multiplexing, H.264 with its fmtp.
        var h264 = RTPStreamDescription(address: "::1", port: 6000, payloadType: 97, codec: .h264, rtcpMux: true)
        #expect(h264.text.contains("a=fmtp:97 packetization-mode=1") && h264.text.contains("c=IN IP6 ::1"))
        let crlf = h264.text.replacingOccurrences(of: "\n", with: "\r\n")
        #expect(try RTPStreamDescription(parsing: crlf) == h264)
        #expect(h264.effectiveRTCPPort == 6000)
        h264.rtcpMux = false
        h264.rtcpPort = 7000
        #expect(try RTPStreamDescription(parsing: h264.text).effectiveRTCPPort == 7000)
    }

    @Test("SDP we cannot use says why", arguments: [
        ("hello", "line 1"), ("v=1\n", "version"), ("v=0\nc=IN IP4 1.2.3.4\n", "no m=video"),
        ("v=0\nm=video 5004 RTP/AVP 96\na=rtpmap:96 VP8/90000\n", "no c= line"),
        ("v=0\nc=IN IP4 1.2.3.4\nm=video x RTP/AVP 96\n", "line 3: port"),
        ("v=0\nc=IN IP4 1.2.3.4\nm=video 5004 UDP/TLS/SCTP webrtc-datachannel\n", "not RTP"),
        ("v=0\nc=IN IP4 1.2.3.4\nm=video 5004 RTP/AVP 96\na=rtpmap:96 AV1/90000\n", "96=AV1"),
        ("v=0\nc=IN IP4 1.2.3.4\nm=video 5004 RTP/AVP 96\na=rtpmap:96 VP8/90000\na=x-zonertc-format:avi\n",
         "line 5"),
    ])
    func errors(_ text: String, _ message: String) {
        let error = #expect(throws: RTPStreamDescriptionError.self) { try RTPStreamDescription(parsing: text) }
        #expect(error?.description.contains(message) == true, "\(String(describing: error))")
    }
}
