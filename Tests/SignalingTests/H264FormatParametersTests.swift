import Testing

@testable import SDP
@testable import Signaling

private func h264(_ parameters: String?) -> RTPCodec {
    RTPCodec(
        payloadType: 97, name: "H264", clockRate: 90_000, formatParameters: parameters.map { FormatParameters($0) })
}

/// The one-pass reading gives what `formatParameter` gives for each of its three parameters.
@Test(arguments: [
    nil, "", "packetization-mode=1", "level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f",
    " Profile-Level-ID = 42E01F ; PACKETIZATION-MODE=0", "profile-level-id=;profile-level-id=640c1f",
    "profile-level-id=42001f;profile-level-id=640c1f", "profile-level-id", "level-asymmetry-allowed=1;;x=y",
    "packetization-mode=1;profile-level-id=zz", "profile-level-ids=42e01f;packetization-mod=1",
])
func h264ParametersMatchLookups(_ text: String?) {
    let codec = h264(text)
    let parameters = H264FormatParameters(codec)
    #expect(parameters.profileLevelIDText == codec.formatParameter("profile-level-id"))
    #expect(parameters.packetizationMode == codec.formatParameter("packetization-mode"))
    #expect(parameters.levelAsymmetryAllowed == codec.formatParameter("level-asymmetry-allowed"))
    #expect(parameters.profileLevelID == codec.h264ProfileLevelID)
}

@Test func h264ProfileLevelIDReadsSixHexDigitsOnly() {
    #expect(H264ProfileLevelID("42e01f") == H264ProfileLevelID(profileIDC: 0x42, profileIOP: 0xE0, levelIDC: 0x1F))
    #expect(H264ProfileLevelID("640C1F") == H264ProfileLevelID(profileIDC: 0x64, profileIOP: 0x0C, levelIDC: 0x1F))
    #expect(H264ProfileLevelID("42e01") == nil)
    #expect(H264ProfileLevelID("42e01f0") == nil)
    #expect(H264ProfileLevelID("42g01f") == nil)
    #expect(H264ProfileLevelID("42é01") == nil)
}
