// The byte buffer behind the incremental readers: bytes arrive in any split, are consumed from
// the front, and every position is reported as an absolute offset in the whole input.

/// An append-at-the-back, consume-from-the-front byte queue that remembers absolute offsets.
struct InputBuffer: Sendable {
    private(set) var storage: [UInt8] = []
    /// Index in `storage` of the first unconsumed byte.
    private(set) var head = 0
    /// Absolute input offset of `storage[0]`.
    private var base = 0

    /// The absolute offset of the first unconsumed byte.
    var offset: Int { base + head }
    /// How many unconsumed bytes there are.
    var count: Int { storage.count - head }

    mutating func append<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        storage.append(contentsOf: bytes)
    }

    /// The unconsumed byte at `i` (relative to the head).
    subscript(i: Int) -> UInt8 { storage[head + i] }

    /// The unconsumed bytes `range` (relative to the head) as an array.
    func bytes(_ range: Range<Int>) -> [UInt8] {
        Array(storage[(head + range.lowerBound)..<(head + range.upperBound)])
    }

    /// Consumes `n` bytes and returns them.
    mutating func take(_ n: Int) -> [UInt8] {
        let out = bytes(0..<n)
        skip(n)
        return out
    }

    mutating func skip(_ n: Int) {
        head += n
        // Compact when the consumed prefix dominates, so memory stays proportional to what waits.
        if head > 4096 && head * 2 > storage.count {
            storage.removeFirst(head)
            base += head
            head = 0
        }
    }

    func uint16LE(at i: Int) -> UInt16 { UInt16(self[i]) | UInt16(self[i + 1]) << 8 }
    func uint32LE(at i: Int) -> UInt32 {
        (0..<4).reversed().reduce(UInt32(0)) { $0 << 8 | UInt32(self[i + $1]) }
    }
    func uint64LE(at i: Int) -> UInt64 {
        (0..<8).reversed().reduce(UInt64(0)) { $0 << 8 | UInt64(self[i + $1]) }
    }
}
