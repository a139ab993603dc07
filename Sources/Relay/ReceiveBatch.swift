import CSystem
import Glibc
import Net
import ZoneCore

/// Buffers for one recvmmsg batch, each datagram with 4 free bytes before it and padding room after
/// it, so ChannelData's header can be written in front of a peer's payload and the frame sent from
/// where it landed, without a copy. Reused for every batch of every socket of one thread.
final class ReceiveBatch {
    /// Room before each datagram: a ChannelData header (RFC 8656 §12.4).
    static let headroom = 4
    /// The largest datagram kept; longer ones arrive cut short and fail their length checks.
    let capacity: Int
    /// How many datagrams one call reads at most.
    let count: Int
    private let stride: Int
    private let base: UnsafeMutableRawPointer
    private let lengthsStorage: UnsafeMutablePointer<Int>
    private let sources: UnsafeMutablePointer<sockaddr_storage>
    private let sourceLengths: UnsafeMutablePointer<socklen_t>

    init(count: Int = 64, capacity: Int = 2048) {
        self.count = min(count, 64)
        self.capacity = capacity
        stride = ReceiveBatch.headroom + capacity + 4  // 4 more: padding to a multiple of 4
        base = UnsafeMutableRawPointer.allocate(byteCount: self.count * stride, alignment: 16)
        base.initializeMemory(as: UInt8.self, repeating: 0, count: self.count * stride)
        lengthsStorage = .allocate(capacity: self.count)
        lengthsStorage.initialize(repeating: 0, count: self.count)
        sources = .allocate(capacity: self.count)
        sources.initialize(repeating: sockaddr_storage(), count: self.count)
        sourceLengths = .allocate(capacity: self.count)
        sourceLengths.initialize(repeating: 0, count: self.count)
    }

    deinit {
        base.deallocate()
        lengthsStorage.deallocate()
        sources.deallocate()
        sourceLengths.deallocate()
    }

    /// Reads up to `count` waiting datagrams from `fd`; how many (0 when none wait).
    func receive(from fd: Int32) -> Int {
        let n = cs_recvmmsg_strided(fd, base.assumingMemoryBound(to: UInt8.self), stride, ReceiveBatch.headroom,
                                    capacity, UInt32(count), lengthsStorage, sources, sourceLengths)
        return max(0, Int(n))
    }

    func length(_ i: Int) -> Int { lengthsStorage[i] }

    /// Datagram `i` as received.
    func payload(_ i: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: base + i * stride + ReceiveBatch.headroom, count: lengthsStorage[i])
    }

    /// Where datagram `i` came from (nil for an address family we do not speak).
    func source(_ i: Int) -> Endpoint? {
        withUnsafePointer(to: &sources[i]) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Endpoint(sockaddr: $0, length: sourceLengths[i]) }
        }
    }

    /// Writes a ChannelData header in front of datagram `i` and zero padding after it; the frame
    /// (RFC 8656 §12.4–12.5) starts at the returned address and is `4 + length` rounded up to 4 long.
    func channelDataFrame(_ i: Int, channel: UInt16) -> (start: UnsafeRawPointer, length: Int) {
        let start = base + i * stride
        let length = lengthsStorage[i]
        start.storeBytes(of: UInt8(channel >> 8), as: UInt8.self)
        start.storeBytes(of: UInt8(channel & 0xFF), toByteOffset: 1, as: UInt8.self)
        start.storeBytes(of: UInt8(length >> 8), toByteOffset: 2, as: UInt8.self)
        start.storeBytes(of: UInt8(length & 0xFF), toByteOffset: 3, as: UInt8.self)
        let padded = (length + 3) & ~3
        for k in length..<padded { start.storeBytes(of: 0, toByteOffset: 4 + k, as: UInt8.self) }
        return (UnsafeRawPointer(start), 4 + padded)
    }
}
