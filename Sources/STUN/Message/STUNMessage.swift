// A STUN message and its decoder: RFC 8489 §5 (structure), §6.3 (receiving: what to check), §14
// (attributes). The encoder is in STUNMessageEncoder.swift.
//
// Decoding a datagram: the header is checked, the attribute framing scanned (STUNMessageLayout),
// FINGERPRINT checked when present, and then every attribute that counts is decoded. Integrity is
// not checked here, because the key usually depends on the decoded USERNAME: call
// `STUNIntegrity.verify` on the same bytes once the key is known.

import ZoneCore

/// A STUN or TURN message: method, class, transaction ID and attributes in order.
public struct STUNMessage: Hashable, Sendable {
    /// What the message does.
    public var method: STUNMethod
    /// Whether it asks, answers or tells.
    public var messageClass: STUNMessageClass
    /// The transaction ID.
    public var transactionID: STUNTransactionID
    /// The attributes in wire order. A decoded message includes MESSAGE-INTEGRITY,
    /// MESSAGE-INTEGRITY-SHA256 and FINGERPRINT as received; the encoder leaves those out and
    /// computes its own.
    public var attributes: [STUNAttribute]

    public init(
        method: STUNMethod, messageClass: STUNMessageClass, transactionID: STUNTransactionID,
        attributes: [STUNAttribute] = []
    ) {
        self.method = method
        self.messageClass = messageClass
        self.transactionID = transactionID
        self.attributes = attributes
    }

    /// Method and class together.
    public var messageType: STUNMessageType {
        get { STUNMessageType(method: method, messageClass: messageClass) }
        set { method = newValue.method; messageClass = newValue.messageClass }
    }

    /// A success response to this message: same method and transaction ID (RFC 8489 §6.3.1.1).
    public func successResponse(attributes: [STUNAttribute] = []) -> STUNMessage {
        STUNMessage(method: method, messageClass: .successResponse, transactionID: transactionID, attributes: attributes)
    }

    /// An error response to this message: same method and transaction ID, ERROR-CODE first
    /// (RFC 8489 §6.3.1.1), then `attributes`.
    public func errorResponse(code: Int, reason: String? = nil, attributes: [STUNAttribute] = []) -> STUNMessage {
        // One array at its final size: `[errorCode] + attributes` allocated the literal and then
        // the concatenation, for every challenge a TURN server sends.
        var all: [STUNAttribute] = []
        all.reserveCapacity(1 + attributes.count)
        all.append(.errorCode(STUNErrorCode(code: code, reason: reason)))
        all.append(contentsOf: attributes)
        return STUNMessage(method: method, messageClass: .errorResponse, transactionID: transactionID,
                           attributes: all)
    }

    /// Decodes one message that fills the datagram `bytes` exactly.
    ///
    /// - Parameter verifyingFingerprint: check FINGERPRINT when present (RFC 8489 §7.3: a
    ///   mismatch means the datagram is not STUN). Default true.
    /// - Throws: `STUNError`; `truncated` for a prefix of a message.
    public init(decoding bytes: UnsafeRawBufferPointer, verifyingFingerprint: Bool = true) throws(STUNError) {
        try self.init(decoding: bytes, layout: try STUNMessageLayout(scanning: bytes),
                      verifyingFingerprint: verifyingFingerprint)
    }

    /// Decodes a message whose layout was scanned already from the same bytes, so that a receiver
    /// that checks MESSAGE-INTEGRITY afterwards (`STUNIntegrity.verify(_:layout:key:)`) scans them
    /// once. Passing another message's layout is a programmer error and traps.
    public init(
        decoding bytes: UnsafeRawBufferPointer, layout: STUNMessageLayout, verifyingFingerprint: Bool = true
    ) throws(STUNError) {
        precondition(bytes.count == layout.header.messageSize, "STUNMessage(decoding:layout:): layout of other bytes")
        if verifyingFingerprint, layout.fingerprintOffset != nil {
            try STUNIntegrity.verifyFingerprint(bytes, layout: layout)
        }
        let id = layout.header.transactionID
        var attributes: [STUNAttribute] = []
        attributes.reserveCapacity(layout.attributeCount)
        try STUNMessageLayout.forEachAttribute(in: bytes, end: layout.header.messageSize) {
            (offset, type, value) throws(STUNError) in
            guard layout.counts(offset: offset) else { return }
            let valueBytes = UnsafeRawBufferPointer(rebasing: bytes[value])
            attributes.append(try STUNAttribute.decode(type: type, value: valueBytes, transactionID: id))
        }
        method = layout.header.messageType.method
        messageClass = layout.header.messageType.messageClass
        transactionID = id
        self.attributes = attributes
    }

    /// Decodes one message that fills `bytes` exactly (see `init(decoding:verifyingFingerprint:)`).
    public init(decoding bytes: [UInt8], verifyingFingerprint: Bool = true) throws(STUNError) {
        self = try withRawBytes(bytes) { (raw) throws(STUNError) in
            try STUNMessage(decoding: raw, verifyingFingerprint: verifyingFingerprint)
        }
    }

    /// `init(decoding:layout:verifyingFingerprint:)` for an array.
    public init(
        decoding bytes: [UInt8], layout: STUNMessageLayout, verifyingFingerprint: Bool = true
    ) throws(STUNError) {
        self = try withRawBytes(bytes) { (raw) throws(STUNError) in
            try STUNMessage(decoding: raw, layout: layout, verifyingFingerprint: verifyingFingerprint)
        }
    }

    /// Decodes one message that fills `bytes` exactly (see `init(decoding:verifyingFingerprint:)`).
    public init(decoding bytes: ArraySlice<UInt8>, verifyingFingerprint: Bool = true) throws(STUNError) {
        self = try withRawBytes(bytes) { (raw) throws(STUNError) in
            try STUNMessage(decoding: raw, verifyingFingerprint: verifyingFingerprint)
        }
    }
}
