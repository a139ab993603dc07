/// The attributes that are flags, with no value: a description has them or not.
enum SDPFlag: Sendable {
    case endOfCandidates, iceLite, rtcpMux, rtcpReducedSize
}

extension Sequence<SDPAttribute> {
    /// Whether `flag` is among the attributes. Matched by case: `contains(.rtcpMux)` compared every
    /// attribute through `==`, copying and destroying each it passed (a few hundred instructions
    /// apiece, several times for every description read).
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
