/// The attributes that are flags, with no value: a description has them or not.
enum SDPFlag: Sendable {
    case endOfCandidates, iceLite, rtcpMux, rtcpReducedSize
}

extension Sequence<SDPAttribute> {
    /// Whether `flag` is among the attributes, matched by case rather than compared with `==`
    /// (every description read asks several times).
    func contains(flag: SDPFlag) -> Bool {
        contains { attribute in
            switch (attribute, flag) {
            case (.endOfCandidates, .endOfCandidates), (.iceLite, .iceLite), (.rtcpMux, .rtcpMux),
                 (.rtcpReducedSize, .rtcpReducedSize):
                true
            default:
                false
            }
        }
    }
}
