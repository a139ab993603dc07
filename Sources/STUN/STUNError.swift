// Errors of the STUN/TURN codecs (RFC 8489 §6, §14; RFC 8656 §12; RFC 4013).
//
// Every problem a peer's bytes can cause is a thrown `STUNError`, never a trap: the codecs read
// datagrams from anyone on the network. `kind` is for code (a server answers 400 for most kinds,
// 401 for `badMessageIntegrity`, and drops the datagram for `badFingerprint`); `description` is for
// the log.

/// Why bytes are not a valid STUN message, attribute or ChannelData message, or why a value
/// cannot be encoded.
public struct STUNError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What went wrong, for code that reacts to it.
    public enum Kind: Equatable, Sendable {
        /// Fewer bytes than the header or the length field says: a prefix of a message, or a
        /// datagram cut short. A stream reader should wait for more; a datagram reader drops it.
        case truncated
        /// The first two bits are not zero (RFC 8489 §5): not a STUN message at all.
        case notSTUN
        /// The magic cookie is not 0x2112A442: an RFC 3489 message or not STUN.
        case badMagicCookie
        /// The header's message length is not a multiple of 4 (RFC 8489 §5).
        case lengthNotMultipleOfFour
        /// The datagram holds bytes after the message the header describes.
        case trailingBytes
        /// An attribute's length (plus padding) runs past the end of the message.
        case attributeOverrun
        /// A known attribute's value has a length its definition does not allow.
        case invalidAttributeLength
        /// An address attribute's family is neither 0x01 (IPv4) nor 0x02 (IPv6).
        case invalidAddressFamily
        /// A text attribute (USERNAME, REALM, NONCE, SOFTWARE, reason phrase) is not UTF-8.
        case invalidText
        /// A value is longer than its attribute allows (e.g. USERNAME of 513 bytes or more).
        case valueTooLong
        /// An ERROR-CODE's class is not 3–6 or its number is not 0–99.
        case invalidErrorCode
        /// Some other field of a known attribute has a value its definition does not allow.
        case invalidAttributeValue
        /// FINGERPRINT is not the last attribute (RFC 8489 §14.7).
        case fingerprintNotLast
        /// The FINGERPRINT value does not match the message's CRC-32.
        case badFingerprint
        /// The message carries neither MESSAGE-INTEGRITY nor MESSAGE-INTEGRITY-SHA256.
        case missingMessageIntegrity
        /// MESSAGE-INTEGRITY or MESSAGE-INTEGRITY-SHA256 does not match under the given key.
        case badMessageIntegrity
        /// The message to encode would be longer than the 16-bit length field allows.
        case messageTooLong
        /// A ChannelData channel number outside 0x4000–0x4FFF (RFC 8656 §12).
        case invalidChannelNumber
        /// A stream holds a byte that starts neither a STUN message nor a ChannelData message.
        case unexpectedStreamContent
        /// SASLprep (RFC 4013 §2.3) found a prohibited character in a password or other string.
        case prohibitedCharacter
    }

    /// What went wrong.
    public var kind: Kind
    /// The problem in words, naming the attribute, offset or character involved.
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { "STUN: \(message)" }
}

/// Runs `body` over the bytes of `bytes`, keeping the typed error: `withUnsafeBytes` on arrays
/// only rethrows `any Error`, so the error is carried out of the closure by hand.
@inline(__always)
func withRawBytes<R>(
    _ bytes: [UInt8], _ body: (UnsafeRawBufferPointer) throws(STUNError) -> R
) throws(STUNError) -> R {
    var failure: STUNError?
    let value: R? = bytes.withUnsafeBytes { raw in
        do throws(STUNError) { return try body(raw) } catch { failure = error; return nil }
    }
    if let failure { throw failure }
    return value!  // nil only together with a failure
}

/// `withRawBytes` for an array slice.
@inline(__always)
func withRawBytes<R>(
    _ bytes: ArraySlice<UInt8>, _ body: (UnsafeRawBufferPointer) throws(STUNError) -> R
) throws(STUNError) -> R {
    var failure: STUNError?
    let value: R? = bytes.withUnsafeBytes { raw in
        do throws(STUNError) { return try body(raw) } catch { failure = error; return nil }
    }
    if let failure { throw failure }
    return value!  // nil only together with a failure
}
