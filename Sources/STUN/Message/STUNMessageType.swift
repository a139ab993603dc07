// The STUN message type: RFC 8489 §5, Figure 3.
//
//      0                 1
//      2  3  4 5 6 7 8 9 0 1 2 3 4 5
//     +--+--+-+-+-+-+-+-+-+-+-+-+-+-+
//     |M |M |M|M|M|C|M|M|M|C|M|M|M|M|
//     |11|10|9|8|7|1|6|5|4|0|3|2|1|0|
//     +--+--+-+-+-+-+-+-+-+-+-+-+-+-+
//
// The class bits sit inside the method bits so that Binding requests (0x0001), responses (0x0101)
// and errors (0x0111) keep the values RFC 3489 gave them.

/// A method and a class, as packed into the first 14 bits of a STUN header.
public struct STUNMessageType: Hashable, Sendable, CustomStringConvertible {
    /// What the message does.
    public var method: STUNMethod
    /// Whether it asks, answers or tells.
    public var messageClass: STUNMessageClass

    public init(method: STUNMethod, messageClass: STUNMessageClass) {
        self.method = method
        self.messageClass = messageClass
    }

    /// The type from the 16-bit header field; the top two bits are ignored (the caller checks
    /// them, since nonzero means "not STUN" rather than "another type").
    public init(rawValue: UInt16) {
        let m = rawValue & 0x000F | (rawValue & 0x00E0) >> 1 | (rawValue & 0x3E00) >> 2
        let c = (rawValue & 0x0010) >> 4 | (rawValue & 0x0100) >> 7
        method = STUNMethod(rawValue: m)!  // at most 12 bits by construction
        messageClass = STUNMessageClass(rawValue: UInt8(c))!  // two bits: every value is a case
    }

    /// The 16-bit header field (top two bits zero).
    public var rawValue: UInt16 {
        let m = method.rawValue
        let c = UInt16(messageClass.rawValue)
        return m & 0x000F | (m & 0x0070) << 1 | (m & 0x0F80) << 2 | (c & 1) << 4 | (c & 2) << 7
    }

    public var description: String { "\(method) \(messageClass)" }
}
