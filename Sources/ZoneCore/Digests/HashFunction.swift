// The common shape of ZoneRTC's cryptographic hash functions (SHA-1, SHA-256, MD5).
//
// A hash is a small value type: `init()` starts a computation, `update` absorbs input in pieces
// of any size, and `finalize` pads and produces the digest without disturbing the value, so a
// partially-fed hash can be copied and finished more than once (HMAC relies on this to reuse the
// key-dependent prefix).

/// An iterated (Merkle–Damgård) hash function with a fixed block and digest size.
public protocol HashFunction: Sendable {
    /// The size of the compression function's input block, in bytes (64 for SHA-1, SHA-256, MD5).
    static var blockSize: Int { get }
    /// The size of the digest, in bytes.
    static var digestSize: Int { get }

    /// A fresh computation that has absorbed no input.
    init()

    /// Absorbs `bytes`. Feeding a message in any number of pieces gives the same digest as
    /// feeding it at once.
    mutating func update(_ bytes: UnsafeRawBufferPointer)

    /// Writes the digest of everything absorbed so far into the first `digestSize` bytes of
    /// `digest`, which must have room for them. `self` is unchanged and may keep absorbing.
    func finalize(into digest: UnsafeMutableRawBufferPointer)
}

extension HashFunction {
    /// Absorbs a collection of bytes; contiguous collections (`[UInt8]`, `ArraySlice`, `Data`, …)
    /// are absorbed in place, others through a small stack buffer.
    @inlinable
    public mutating func update<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        let done: Void? = bytes.withContiguousStorageIfAvailable { buffer in
            update(UnsafeRawBufferPointer(buffer))
        }
        if done != nil { return }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 256) { chunk in
            var count = 0
            for byte in bytes {
                chunk[count] = byte
                count += 1
                if count == chunk.count {
                    update(UnsafeRawBufferPointer(chunk))
                    count = 0
                }
            }
            if count > 0 { update(UnsafeRawBufferPointer(start: chunk.baseAddress, count: count)) }
        }
    }

    /// The digest of everything absorbed so far, as a new array of `digestSize` bytes.
    @inlinable
    public func finalize() -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: Self.digestSize) { buffer, initialized in
            finalize(into: UnsafeMutableRawBufferPointer(buffer))
            initialized = Self.digestSize
        }
    }

    /// The digest of `bytes`, in one call.
    @inlinable
    public static func hash(_ bytes: some Collection<UInt8>) -> [UInt8] {
        var hasher = Self()
        hasher.update(bytes)
        return hasher.finalize()
    }

    /// The digest of the bytes in `bytes`, in one call, without copying them.
    @inlinable
    public static func hash(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        var hasher = Self()
        hasher.update(bytes)
        return hasher.finalize()
    }
}
