// ICE attributes: PRIORITY (RFC 8445 §7.1.1), USE-CANDIDATE (§7.1.2), ICE-CONTROLLED and
// ICE-CONTROLLING (§7.1.3). Registered in §16.1.
//
// PRIORITY is a 32-bit priority; USE-CANDIDATE is empty; the role attributes carry a 64-bit
// tie-breaker that settles role conflicts (§7.3.1.1).

extension STUNAttribute {
    static func decodeICEFamily(
        type: STUNAttributeType, value: UnsafeRawBufferPointer
    ) throws(STUNError) -> STUNAttribute {
        switch type {
        case .priority:
            try expectLength(value, type, 4)
            return .priority(value.stunUInt32(at: 0))
        case .useCandidate:
            try expectLength(value, type, 0)
            return .useCandidate
        case .iceControlled:
            try expectLength(value, type, 8)
            return .iceControlled(tieBreaker: value.stunUInt64(at: 0))
        default:  // .iceControlling
            try expectLength(value, type, 8)
            return .iceControlling(tieBreaker: value.stunUInt64(at: 0))
        }
    }
}
