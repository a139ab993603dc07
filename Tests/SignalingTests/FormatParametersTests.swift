// `a=fmtp` parameters read once when the line is parsed (RFC 8866 §6.15): lookups by name in any
// case, text kept as written, one parameter rewritten without touching the rest.

import Testing

@testable import SDP

@Test func formatParametersReadPairsOnceAndKeepTheText() {
    let text = " Profile-Level-ID = 42E01F ;;PACKETIZATION-MODE=0;flag;empty=;x=y"
    let parameters = FormatParameters(text)
    #expect(parameters.text == text && parameters.description == text)
    #expect(parameters.parameters.map(\.name) == ["Profile-Level-ID", "PACKETIZATION-MODE", "x"])
    #expect(parameters.value(of: "profile-level-id") == "42E01F")
    #expect(parameters.value(of: "packetization-mode") == "0")
    #expect(parameters.value(of: "flag") == nil && parameters.value(of: "empty") == nil)
    #expect(FormatParameters("a=1;a=2").value(of: "A") == "1")
    // Telephone-event's `0-15` and RTX-for-RED's `111/111` are not pairs; they are kept as text.
    #expect(FormatParameters("0-15").parameters.isEmpty && FormatParameters("0-15").text == "0-15")
}

@Test func settingAFormatParameterKeepsTheRestAsWritten() {
    let parameters = FormatParameters("a=1; Level = 1f ;b")
    #expect(parameters.setting("level", to: "34").text == "a=1; Level = 34 ;b")
    #expect(parameters.setting("c", to: "2").text == "a=1; Level = 1f ;b;c=2")
    #expect(FormatParameters("").setting("apt", to: "96").text == "apt=96")
}

/// A description's fmtp lines come back byte for byte, and its codecs carry them parsed.
@Test func formatParametersRoundTripThroughADescription() throws {
    let line = "a=fmtp:97 profile-level-id=42e01f;level-asymmetry-allowed=1; packetization-mode=1"
    let sdp = """
        v=0\r
        o=- 1 1 IN IP4 127.0.0.1\r
        s=-\r
        t=0 0\r
        m=video 9 UDP/TLS/RTP/SAVPF 97\r
        c=IN IP4 0.0.0.0\r
        a=rtpmap:97 H264/90000\r
        \(line)\r

        """
    let description = try SessionDescription(parsing: sdp, type: .offer)
    #expect(description.description.contains(line + "\r\n"))
    let codec = try #require(description.media.first?.codecs.first)
    #expect(codec.formatParameter("packetization-mode") == "1")
    #expect(codec.h264ProfileLevelID == H264ProfileLevelID("42e01f"))
}
