// PASSWORD-ALGORITHMS (RFC 8489 §14.11) and PASSWORD-ALGORITHM (§14.12), with the algorithm
// registry of §18.5.
//
//      0                   1                   2                   3
//     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//     |          Algorithm            |  Algorithm Parameters Length  |
//     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//     |                    Algorithm Parameters (variable)
//     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// PASSWORD-ALGORITHMS repeats this entry, each padded to 4 bytes; PASSWORD-ALGORITHM carries one
// (its padding is the attribute's). Neither registered algorithm has parameters.

import ZoneCore

/// A password algorithm (RFC 8489 §18.5): how the long-term key is derived from the password.
public struct STUNPasswordAlgorithm: Hashable, Sendable, CustomStringConvertible {
    /// The registered number.
    public var number: UInt16
    /// The algorithm's parameters (empty for MD5 and SHA-256).
    public var parameters: [UInt8]

    public init(number: UInt16, parameters: [UInt8] = []) {
        self.number = number
        self.parameters = parameters
    }

    /// MD5 (0x0001): key = MD5(username ":" realm ":" password), the RFC 5389 key.
    public static let md5 = STUNPasswordAlgorithm(number: 0x0001)
    /// SHA-256 (0x0002): key = SHA-256(username ":" realm ":" password).
    public static let sha256 = STUNPasswordAlgorithm(number: 0x0002)

    public var description: String {
        switch number {
        case 0x0001: "MD5"
        case 0x0002: "SHA-256"
        default: "algorithm 0x" + Hex.string(number, digits: 4)
        }
    }

    func encodedLength(padded: Bool) throws(STUNError) -> Int {
        guard parameters.count <= 0xFFFF else {
            throw STUNError(.valueTooLong, "password algorithm parameters of \(parameters.count) bytes")
        }
        return 4 + (padded ? (parameters.count + 3) & ~3 : parameters.count)
    }

    func write(to w: inout STUNWriter, padded: Bool) {
        w.u16(number)
        w.u16(UInt16(parameters.count))
        w.append(parameters)
        if padded { w.pad(with: 0) }
    }

    /// One entry at `offset` of `value`; returns it and the offset after its (padded) parameters.
    private static func entry(
        _ value: UnsafeRawBufferPointer, at offset: Int, type: STUNAttributeType
    ) throws(STUNError) -> (STUNPasswordAlgorithm, Int) {
        guard value.count - offset >= 4 else {
            throw STUNError(.invalidAttributeLength, "\(type) entry at \(offset) is shorter than 4 bytes")
        }
        let number = value.stunUInt16(at: offset)
        let length = Int(value.stunUInt16(at: offset + 2))
        guard value.count - offset - 4 >= length else {
            throw STUNError(.invalidAttributeLength,
                            "\(type) entry at \(offset) claims \(length) parameter bytes; fewer remain")
        }
        let parameters = Array(value[(offset + 4)..<(offset + 4 + length)])
        let end = min(value.count, offset + 4 + (length + 3) & ~3)
        return (STUNPasswordAlgorithm(number: number, parameters: parameters), end)
    }

    static func decodeSingle(_ value: UnsafeRawBufferPointer) throws(STUNError) -> STUNPasswordAlgorithm {
        let (algorithm, end) = try entry(value, at: 0, type: .passwordAlgorithm)
        guard end == value.count else {
            throw STUNError(.invalidAttributeLength, "PASSWORD-ALGORITHM has \(value.count - end) extra bytes")
        }
        return algorithm
    }

    static func decodeList(_ value: UnsafeRawBufferPointer) throws(STUNError) -> [STUNPasswordAlgorithm] {
        var list: [STUNPasswordAlgorithm] = []
        var offset = 0
        while offset < value.count {
            let (algorithm, end) = try entry(value, at: offset, type: .passwordAlgorithms)
            list.append(algorithm)
            offset = end
        }
        return list
    }
}
