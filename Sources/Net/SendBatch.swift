import CSystem
import Glibc
import ZoneCore

/// Datagrams queued for one socket and sent with one sendmmsg. The bytes stay where they are (the
/// relay's `ReceiveBatch`, a `UDPSocket`'s staging buffer) until `send` returns. With segmentation
/// offload on, a run of equal-sized datagrams to one destination, optionally ended by one shorter
/// datagram (an RTP frame's last packet), goes as a single UDP_SEGMENT message: the kernel walks
/// routing, the IP layer and loopback once for the run and cuts it into datagrams at the end.
public final class SendBatch {
    /// Most messages per sendmmsg, and most datagrams in one segmented message (UDP_MAX_SEGMENTS
    /// is 64 on older kernels).
    public static let maxMessages = 64
    public static let maxSegments = 64
    /// A segmented message must fit one IP datagram.
    public static let maxSegmentedBytes = 65_000

    /// Whether runs may go as UDP_SEGMENT messages; turned off for good at the first kernel refusal.
    public private(set) var segmentOffload: Bool
    private let iov: UnsafeMutablePointer<iovec>
    private let messages: UnsafeMutablePointer<cs_outgoing>
    private let destinations: UnsafeMutablePointer<sockaddr_storage>
    private var lastDestination: Endpoint?
    private var lastBytes = 0
    /// Whether the current run ended with a shorter datagram: UDP_SEGMENT lets only the last
    /// piece be shorter than the segment size (udp_send_skb in net/ipv4/udp.c), so it takes no more.
    private var runClosed = false
    private var iovCount = 0
    /// Messages queued so far (a segmented run is one message).
    public private(set) var messageCount = 0
    /// Datagrams queued so far.
    public private(set) var datagrams = 0

    public init(segmentOffload: Bool) {
        self.segmentOffload = segmentOffload
        iov = .allocate(capacity: SendBatch.maxMessages)
        iov.initialize(repeating: iovec(), count: SendBatch.maxMessages)
        messages = .allocate(capacity: SendBatch.maxMessages)
        messages.initialize(repeating: cs_outgoing(), count: SendBatch.maxMessages)
        destinations = .allocate(capacity: SendBatch.maxMessages)
        destinations.initialize(repeating: sockaddr_storage(), count: SendBatch.maxMessages)
    }

    deinit {
        iov.deallocate()
        messages.deallocate()
        destinations.deallocate()
    }

    public var isFull: Bool { iovCount == SendBatch.maxMessages }
    public var isEmpty: Bool { iovCount == 0 }

    /// Queues `length` bytes at `start` for `destination`. The caller sends when `isFull`.
    public func append(_ start: UnsafeRawPointer, length: Int, to destination: Endpoint) {
        precondition(!isFull, "send the batch before queueing more")
        iov[iovCount] = iovec(iov_base: UnsafeMutableRawPointer(mutating: start), iov_len: length)
        // `lastBytes` is the size of every datagram in the current message's run.
        if segmentOffload, messageCount > 0, !runClosed, length > 0, length <= lastBytes,
           destination == lastDestination, messages[messageCount - 1].iov_count < SendBatch.maxSegments,
           lastBytes * messages[messageCount - 1].iov_count + length <= SendBatch.maxSegmentedBytes {
            // One more datagram to the same place, the same size or a shorter last one: extend the run.
            messages[messageCount - 1].iov_count += 1
            messages[messageCount - 1].segment_size = UInt16(lastBytes)
            runClosed = length < lastBytes
        } else {
            let d = destinations + messageCount
            let address = destination.sockaddrStorage
            d.pointee = address.storage
            messages[messageCount] = cs_outgoing(iov: iov + iovCount, iov_count: 1, destination: d,
                                                 destination_length: address.length, segment_size: 0)
            messageCount += 1
            lastDestination = destination
            lastBytes = length
            runClosed = false
        }
        iovCount += 1
        datagrams += 1
    }

    /// Sends everything queued on `fd` and empties the batch. Returns how many datagrams the kernel
    /// did not take (a full buffer drops them, as a congested path would).
    @discardableResult
    public func send(on fd: Int32) -> Int {
        defer { reset() }
        guard messageCount > 0 else { return 0 }
        var start = 0
        var lost = 0
        while start < messageCount {
            let n = Int(cs_send_batch(fd, messages + start, UInt32(messageCount - start)))
            if n > 0 { start += n; continue }
            let error = cs_errno()
            if error == EAGAIN || error == EWOULDBLOCK || error == ENOBUFS {
                for k in start..<messageCount { lost += messages[k].iov_count }
                return lost
            }
            if (error == EIO || error == EINVAL || error == ENOPROTOOPT) && messages[start].iov_count > 1 {
                // The kernel or device cannot segment: datagram by datagram from here on.
                segmentOffload = false
                return lost + sendOneByOne(on: fd, from: start)
            }
            // This destination refuses (unreachable, not permitted): skip it, send the rest.
            lost += messages[start].iov_count
            start += 1
        }
        return lost
    }

    /// Sends the messages from `first` on as single datagrams, 64 per call.
    private func sendOneByOne(on fd: Int32, from first: Int) -> Int {
        var singles: [cs_outgoing] = []
        for k in first..<messageCount {
            let m = messages[k]
            for j in 0..<m.iov_count {
                singles.append(cs_outgoing(iov: m.iov + j, iov_count: 1, destination: m.destination,
                                           destination_length: m.destination_length, segment_size: 0))
            }
        }
        var lost = 0
        var start = 0
        while start < singles.count {
            let chunk = min(SendBatch.maxMessages, singles.count - start)
            let n = singles.withUnsafeBufferPointer { Int(cs_send_batch(fd, $0.baseAddress! + start, UInt32(chunk))) }
            if n > 0 { start += n } else { lost += 1; start += 1 }
        }
        return lost
    }

    private func reset() {
        iovCount = 0
        messageCount = 0
        datagrams = 0
        lastDestination = nil
        lastBytes = 0
        runClosed = false
    }
}
