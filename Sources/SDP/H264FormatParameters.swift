// The `a=fmtp` parameters of an H.264 format that offer and answer compare: RFC 6184 §8.1
// (`profile-level-id`, `packetization-mode`, `level-asymmetry-allowed`) and §8.2.2.

/// The H.264 parameters of one format, taken in one pass over its `a=fmtp` pairs: answering an
/// offer compares them for both formats, first to match them and then to write the answer.
struct H264FormatParameters {
    /// `profile-level-id` as written; nil when absent.
    var profileLevelIDText: String?
    /// `packetization-mode` as written; nil when absent (mode 0).
    var packetizationMode: String?
    /// `level-asymmetry-allowed` as written; nil when absent.
    var levelAsymmetryAllowed: String?
    /// The profile-level-id (`42000a` when absent, RFC 6184 §8.1); nil when it is malformed. Read
    /// once here: matching a codec and then answering it ask for it twice each side.
    private(set) var profileLevelID: H264ProfileLevelID?

    /// The parameters of `codec`: the first value of each, as `RTPCodec.formatParameter` gives it.
    init(_ codec: RTPCodec) {
        codec.formatParameters?.forEachParameter { name, value in
            // The three names differ in length: the length picks the one name worth comparing.
            switch name.count {
            case 16:
                if profileLevelIDText == nil, FormatParameters.matches(name, "profile-level-id") {
                    profileLevelIDText = String(decoding: value, as: UTF8.self)
                }
            case 18:
                if packetizationMode == nil, FormatParameters.matches(name, "packetization-mode") {
                    packetizationMode = String(decoding: value, as: UTF8.self)
                }
            case 23:
                if levelAsymmetryAllowed == nil, FormatParameters.matches(name, "level-asymmetry-allowed") {
                    levelAsymmetryAllowed = String(decoding: value, as: UTF8.self)
                }
            default:
                break
            }
            return profileLevelIDText != nil && packetizationMode != nil && levelAsymmetryAllowed != nil
        }
        if let text = profileLevelIDText {
            profileLevelID = H264ProfileLevelID(text)
        } else {
            profileLevelID = .absentDefault
        }
    }
}
