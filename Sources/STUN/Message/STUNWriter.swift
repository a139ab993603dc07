// A byte writer for the encoders: network-order fields (RFC 8489 §5: all are big-endian) written
// into an array's storage that the encoder sized up front. Every encoder computes its output's
// exact size before writing, so bytes go straight into place rather than being appended one at
// a time. Each write is still checked against the end of the storage, so a size computed wrong
// traps instead of writing past it.

/// Writes big-endian fields into storage sized in advance.
struct STUNWriter {
    private let storage: UnsafeMutableRawBufferPointer
    /// Bytes written so far, from the start.
    private(set) var count = 0

    private init(_ storage: UnsafeMutableRawBufferPointer) {
        self.storage = storage
    }

    /// An array of what `write` writes, which must be at most `capacity` bytes.
    static func bytes<E: Error>(capacity: Int, _ write: (inout STUNWriter) throws(E) -> Void) throws(E) -> [UInt8] {
        var failure: E?
        let bytes = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, initialized in
            var w = STUNWriter(UnsafeMutableRawBufferPointer(buffer))
            do throws(E) {
                try write(&w)
            } catch {
                failure = error
            }
            initialized = w.count
        }
        if let failure { throw failure }
        return bytes
    }

    /// Room for `n` more bytes, or a trap: past the end lies memory the array does not own.
    @inline(__always) private func reserve(_ n: Int) {
        precondition(n <= storage.count - count, "STUN writer: more bytes than the encoder sized")
    }

    @inline(__always) mutating func u8(_ v: UInt8) {
        reserve(1)
        storage.storeBytes(of: v, toByteOffset: count, as: UInt8.self)
        count += 1
    }

    @inline(__always) mutating func u16(_ v: UInt16) {
        reserve(2)
        storage.storeBytes(of: v.bigEndian, toByteOffset: count, as: UInt16.self)
        count += 2
    }

    @inline(__always) mutating func u32(_ v: UInt32) {
        reserve(4)
        storage.storeBytes(of: v.bigEndian, toByteOffset: count, as: UInt32.self)
        count += 4
    }

    @inline(__always) mutating func u64(_ v: UInt64) {
        reserve(8)
        storage.storeBytes(of: v.bigEndian, toByteOffset: count, as: UInt64.self)
        count += 8
    }

    @inline(__always) mutating func append(_ b: [UInt8]) {
        b.withUnsafeBytes { append(raw: $0) }
    }

    @inline(__always) mutating func append(utf8 s: String) {
        var s = s
        s.withUTF8 { append(raw: UnsafeRawBufferPointer($0)) }
    }

    @inline(__always) private mutating func append(raw bytes: UnsafeRawBufferPointer) {
        reserve(bytes.count)
        guard let source = bytes.baseAddress, let target = storage.baseAddress else { return }
        (target + count).copyMemory(from: source, byteCount: bytes.count)
        count += bytes.count
    }

    /// Appends `byte` until the count is a multiple of 4.
    @inline(__always) mutating func pad(with byte: UInt8) {
        while count & 3 != 0 { u8(byte) }
    }

    /// Appends `n` zero bytes (room for a MAC computed afterwards).
    @inline(__always) mutating func zeros(_ n: Int) {
        reserve(n)
        guard n > 0, let target = storage.baseAddress else { return }
        (target + count).initializeMemory(as: UInt8.self, repeating: 0, count: n)
        count += n
    }

    /// Overwrites the big-endian 16-bit field at `offset`, within what was written.
    @inline(__always) mutating func set16(_ v: UInt16, at offset: Int) {
        precondition(offset >= 0 && offset <= count - 2, "STUN writer: a field outside what was written")
        storage.storeBytes(of: v.bigEndian, toByteOffset: offset, as: UInt16.self)
    }

    /// The bytes written so far.
    var written: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: storage[..<count]) }

    /// The bytes written so far, writable (to fill in a MAC over what precedes it).
    var writtenMutable: UnsafeMutableRawBufferPointer { UnsafeMutableRawBufferPointer(rebasing: storage[..<count]) }
}
