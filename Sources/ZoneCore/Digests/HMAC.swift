// HMAC, as specified in RFC 2104 ("HMAC: Keyed-Hashing for Message Authentication", February 1997):
//
//     HMAC(K, text) = H(K ⊕ opad, H(K ⊕ ipad, text))
//
// where K is the key zero-padded to the hash's block size B (a key longer than B is first replaced
// by H(K), RFC 2104 §2), ipad is the byte 0x36 and opad the byte 0x5C repeated B times.
// ZoneRTC uses HMAC-SHA1 for STUN MESSAGE-INTEGRITY (RFC 5389 §15.4) and HMAC-SHA256 (RFC 4231
// vectors) where newer protocols ask for it.

/// A keyed HMAC computation over the hash function `H`.
///
/// As RFC 2104 §4 suggests, `init(key:)` absorbs the K ⊕ ipad and K ⊕ opad blocks once and keeps
/// the two intermediate hash states; each MAC then costs only the message blocks, one inner
/// finalization and one outer block. Keep one `HMAC` per key (a STUN agent verifying many
/// messages with the same password, for instance).
public struct HMAC<H: HashFunction>: Sendable {
    /// H after absorbing K ⊕ ipad.
    @usableFromInline let inner: H
    /// H after absorbing K ⊕ opad.
    @usableFromInline let outer: H

    /// The MAC size in bytes: the digest size of `H` (RFC 2104 §5 truncation is left to callers).
    @inlinable public static var macSize: Int { H.digestSize }

    /// Prepares to authenticate messages with `key` (any length; RFC 2104 §3 recommends at least
    /// the digest size).
    @inlinable
    public init(key: some Collection<UInt8>) {
        if let prepared = key.withContiguousStorageIfAvailable({ HMAC(key: UnsafeRawBufferPointer($0)) }) {
            self = prepared
        } else {
            self = Array(key).withUnsafeBytes { HMAC(key: $0) }
        }
    }

    /// Prepares to authenticate messages with the key in `key`, which is not retained.
    @inlinable
    public init(key: UnsafeRawBufferPointer) {
        self.init(key: key, emptyHash: H())
    }

    /// The same, every hash starting as a copy of `emptyHash`, a value that has absorbed nothing:
    /// `SHA1(implementation: .portable)` to run HMAC-SHA1 on one chosen compression function.
    @inlinable
    public init(key: UnsafeRawBufferPointer, emptyHash: H) {
        var inner = emptyHash
        var outer = emptyHash
        withUnsafeTemporaryAllocation(byteCount: H.blockSize, alignment: 16) { block in
            block.initializeMemory(as: UInt8.self, repeating: 0)
            if key.count > H.blockSize {
                // RFC 2104 §2: "Applications that use keys longer than B bytes will first hash the
                // key using H and then use the resultant L byte string as the actual key to HMAC."
                var keyHash = emptyHash
                keyHash.update(key)
                keyHash.finalize(into: block)
            } else if let keyBase = key.baseAddress, key.count > 0 {
                block.baseAddress!.copyMemory(from: keyBase, byteCount: key.count)
            }
            let bytes = block.bindMemory(to: UInt8.self)
            for i in bytes.indices { bytes[i] ^= 0x36 }
            inner.update(UnsafeRawBufferPointer(block))
            for i in bytes.indices { bytes[i] ^= 0x36 ^ 0x5C }
            outer.update(UnsafeRawBufferPointer(block))
        }
        self.inner = inner
        self.outer = outer
    }

    /// Writes the MAC of the bytes in `message` (read in place) into the first `macSize` bytes
    /// of `mac`, which must have room for them.
    @inlinable
    public func authenticationCode(for message: UnsafeRawBufferPointer, into mac: UnsafeMutableRawBufferPointer) {
        precondition(mac.count >= H.digestSize, "HMAC.authenticationCode(for:into:): buffer smaller than the MAC")
        var innerHash = inner
        innerHash.update(message)
        var outerHash = outer
        withUnsafeTemporaryAllocation(byteCount: H.digestSize, alignment: 16) { innerDigest in
            innerHash.finalize(into: innerDigest)
            outerHash.update(UnsafeRawBufferPointer(innerDigest))
        }
        outerHash.finalize(into: mac)
    }

    /// The MAC of the bytes in `message`, read in place.
    @inlinable
    public func authenticationCode(for message: UnsafeRawBufferPointer) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: H.digestSize) { buffer, initialized in
            authenticationCode(for: message, into: UnsafeMutableRawBufferPointer(buffer))
            initialized = H.digestSize
        }
    }

    /// The MAC of `message`; contiguous collections are read in place.
    @inlinable
    public func authenticationCode(for message: some Collection<UInt8>) -> [UInt8] {
        if let mac = message.withContiguousStorageIfAvailable({
            authenticationCode(for: UnsafeRawBufferPointer($0))
        }) {
            return mac
        }
        return Array(message).withUnsafeBytes { authenticationCode(for: $0) }
    }

    /// The MAC of `message` under `key`, in one call. To MAC several messages under one key,
    /// make an `HMAC(key:)` once instead.
    @inlinable
    public static func authenticationCode(for message: some Collection<UInt8>, key: some Collection<UInt8>) -> [UInt8] {
        HMAC(key: key).authenticationCode(for: message)
    }
}
