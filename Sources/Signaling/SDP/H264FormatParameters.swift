// The `a=fmtp` parameters of an H.264 format that offer and answer compare: RFC 6184 §8.1
// (`profile-level-id`, `packetization-mode`, `level-asymmetry-allowed`) and §8.2.2.

/// The H.264 parameters of one format, read in one pass over its `a=fmtp` text: answering an
/// offer compares them for both formats, first to match them and then to write the answer, and
/// looking each up on its own read the whole text nine times an answer.
struct H264FormatParameters {
    /// `profile-level-id` as written; nil when absent.
    var profileLevelIDText: String?
    /// `packetization-mode` as written; nil when absent (mode 0).
    var packetizationMode: String?
    /// `level-asymmetry-allowed` as written; nil when absent.
    var levelAsymmetryAllowed: String?

    /// The parameters of `codec`: the first value of each, as `RTPCodec.formatParameter` gives it.
    init(_ codec: RTPCodec) {
        codec.forEachFormatParameter { name, value in
            // The three names differ in length: one comparison of letters at most per parameter.
            if Self.matches(name, "profile-level-id") {
                if profileLevelIDText == nil { profileLevelIDText = String(decoding: value, as: UTF8.self) }
            } else if Self.matches(name, "packetization-mode") {
                if packetizationMode == nil { packetizationMode = String(decoding: value, as: UTF8.self) }
            } else if Self.matches(name, "level-asymmetry-allowed") {
                if levelAsymmetryAllowed == nil { levelAsymmetryAllowed = String(decoding: value, as: UTF8.self) }
            }
            return profileLevelIDText != nil && packetizationMode != nil && levelAsymmetryAllowed != nil
        }
    }

    /// The profile-level-id (`42000a` when absent, RFC 6184 §8.1); nil when it is malformed.
    var profileLevelID: H264ProfileLevelID? {
        guard let text = profileLevelIDText else { return .absentDefault }
        return H264ProfileLevelID(text)
    }

    /// Whether a parameter's `name` is `key` (lowercase) in any ASCII case.
    /// Byte by byte, lengths first: a generic comparison of the two sequences cost ten times this.
    private static func matches(_ name: Slice<UnsafeBufferPointer<UInt8>>, _ key: StaticString) -> Bool {
        guard name.count == key.utf8CodeUnitCount else { return false }
        let name = UnsafeBufferPointer(rebasing: name)
        for i in name.indices where SDPGrammar.lowercased(name[i]) != key.utf8Start[i] { return false }
        return true
    }
}
