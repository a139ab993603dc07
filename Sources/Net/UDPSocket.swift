import CSystem
import Glibc
import ZoneCore

/// A non-blocking UDP socket with batched receive and send (recvmmsg/sendmmsg), for the peer's
/// and the relay's datagram paths. It moves datagrams; what they mean is a machine's business.
/// Sends go through a `SendBatch`, so a train of datagrams to one place leaves as one UDP_SEGMENT
/// message; with `coalescedReceive` a train may arrive as one buffer (UDP_GRO) and is split again.
public final class UDPSocket {
    public let fd: Int32
    public let localEndpoint: Endpoint
    /// The largest datagram read; longer ones are truncated by the kernel.
    public let maxDatagram: Int
    /// Whether the kernel hands trains of datagrams over as one buffer (UDP_GRO is on).
    public let coalescedReceive: Bool
    /// Whether sends still go as UDP_SEGMENT runs (off when asked, or after the kernel refused one).
    public var segmentOffload: Bool { sendBatch.segmentOffload }
    /// Coalesced messages dropped because their control data did not say where the datagrams end.
    public private(set) var unsplittableMessages = 0
    /// Messages read that held more than one datagram (what UDP_GRO saved in system calls).
    public private(set) var coalescedMessages = 0
    private let batch: Int
    /// The bytes of one message as read: `maxDatagram`, or a whole coalesced train with UDP_GRO.
    private let messageSize: Int
    private let buffers: UnsafeMutableRawPointer
    private let lengths: UnsafeMutablePointer<Int>
    private let sources: UnsafeMutablePointer<sockaddr_storage>
    private let sourceLengths: UnsafeMutablePointer<socklen_t>
    private let segmentSizes: UnsafeMutablePointer<Int32>
    private let sendBatch: SendBatch
    /// Where outgoing payloads wait while `sendBatch` points at them (allocated at the first send:
    /// the relay keeps a socket per allocation and sends on most through its own batches).
    private var staging: UnsafeMutableRawPointer?
    private var stagingCapacity = 0

    /// Binds to `endpoint` (port 0: any free port). `reusePort` lets several sockets share a port
    /// (SO_REUSEPORT), one per thread. `segmentOffload` sends runs of datagrams as UDP_SEGMENT
    /// messages (falling back for good at the first refusal); `coalescedReceive` asks for UDP_GRO,
    /// and without it (the kernel may refuse) datagrams are read one per message as before.
    public init(bind endpoint: Endpoint, reusePort: Bool = false, batch: Int = 32, maxDatagram: Int = 2048,
                segmentOffload: Bool = true, coalescedReceive: Bool = false) throws {
        let fd = socket(Int32(endpoint.family.socketFamily),
                        Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SocketError("socket") }
        var one: Int32 = 1
        if reusePort { setsockopt(fd, SOL_SOCKET, CS_SO_REUSEPORT, &one, socklen_t(MemoryLayout<Int32>.size)) }
        var size: Int32 = 4 << 20
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        let r: Int32 = endpoint.withSockAddr { addr, len in Glibc.bind(fd, addr, len) }
        guard r == 0 else {
            let e = SocketError("bind \(endpoint)")
            close(fd)
            throw e
        }
        self.fd = fd
        localEndpoint = try TCPSocket.localEndpoint(fd)
        self.maxDatagram = maxDatagram
        self.coalescedReceive = coalescedReceive && cs_enable_gro(fd) == 0
        // A coalesced message is at most one IP datagram's payload; a buffer shorter than it would
        // lose the train's tail (udp_recvmsg truncates), so each message gets room for a whole one.
        messageSize = self.coalescedReceive ? UDPSocket.largestMessage : maxDatagram
        self.batch = min(batch, 64)
        buffers = .allocate(byteCount: self.batch * messageSize, alignment: 16)
        lengths = .allocate(capacity: self.batch)
        lengths.initialize(repeating: 0, count: self.batch)
        sources = .allocate(capacity: self.batch)
        sources.initialize(repeating: sockaddr_storage(), count: self.batch)
        sourceLengths = .allocate(capacity: self.batch)
        sourceLengths.initialize(repeating: 0, count: self.batch)
        segmentSizes = .allocate(capacity: self.batch)
        segmentSizes.initialize(repeating: 0, count: self.batch)
        sendBatch = SendBatch(segmentOffload: segmentOffload)
    }

    deinit {
        close(fd)
        buffers.deallocate()
        lengths.deallocate()
        sources.deallocate()
        sourceLengths.deallocate()
        segmentSizes.deallocate()
        staging?.deallocate()
    }

    /// The most bytes one UDP message carries (65,535 less the IPv4 and UDP headers).
    static let largestMessage = 65_507

    /// Reads every waiting datagram, up to a batch of messages at a time, calling `body` with each
    /// payload (valid only during the call) and its source; a coalesced message is split into its
    /// datagrams in place. Returns how many datagrams were read.
    @discardableResult
    public func receiveAll(_ body: (UnsafeRawBufferPointer, Endpoint) -> Void) -> Int {
        var total = 0
        let bytes = buffers.assumingMemoryBound(to: UInt8.self)
        while true {
            let n: Int32
            if coalescedReceive {
                n = cs_recvmmsg_segmented(fd, bytes, messageSize, UInt32(batch), lengths, sources, sourceLengths,
                                          segmentSizes)
            } else {
                n = cs_recvmmsg(fd, bytes, messageSize, UInt32(batch), lengths, sources, sourceLengths)
            }
            guard n > 0 else { return total }
            for i in 0..<Int(n) {
                guard let from = Endpoint(storage: sources[i]) else { continue }
                let message = UnsafeRawPointer(buffers + i * messageSize)
                let split = CoalescedDatagrams(length: min(lengths[i], messageSize),
                                               segmentSize: coalescedReceive ? segmentSizes[i] : 0)
                var pieces = 0
                for range in split {
                    body(UnsafeRawBufferPointer(start: message + range.lowerBound, count: range.count), from)
                    pieces += 1
                }
                if pieces == 0 { unsplittableMessages += 1 } else if pieces > 1 { coalescedMessages += 1 }
                total += pieces
            }
            if Int(n) < batch { return total }
        }
    }

    /// Sends datagrams in as few system calls as it can (runs to one destination as UDP_SEGMENT
    /// messages); returns how many the kernel took. When it takes no more (the socket would block)
    /// the rest are the last ones: UDP drops them, as a full path would, or the caller retries them.
    @discardableResult
    public func send(_ datagrams: [(payload: [UInt8], to: Endpoint)]) -> Int {
        var sent = 0
        var start = 0
        while start < datagrams.count {
            let end = min(datagrams.count, start + SendBatch.maxMessages)
            var bytes = 0
            for k in start..<end { bytes += datagrams[k].payload.count }
            let staging = reserveStaging(bytes)
            var offset = 0
            for k in start..<end {
                let payload = datagrams[k].payload
                payload.withUnsafeBytes { source in
                    guard let from = source.baseAddress else { return }
                    (staging + offset).copyMemory(from: from, byteCount: source.count)
                }
                sendBatch.append(staging + offset, length: payload.count, to: datagrams[k].to)
                offset += payload.count
            }
            let lost = sendBatch.send(on: fd)
            sent += end - start - lost
            if lost > 0 { return sent }
            start = end
        }
        return sent
    }

    private func reserveStaging(_ bytes: Int) -> UnsafeMutableRawPointer {
        if let staging, bytes <= stagingCapacity { return staging }
        staging?.deallocate()
        stagingCapacity = Swift.max(bytes, SendBatch.maxMessages * maxDatagram)
        let fresh = UnsafeMutableRawPointer.allocate(byteCount: stagingCapacity, alignment: 16)
        staging = fresh
        return fresh
    }

    /// Waits until a datagram is waiting or `milliseconds` pass (poll(2)); true when readable.
    /// For blocking clients and tests; an event loop uses its own readiness instead.
    public func waitReadable(milliseconds: Int32) -> Bool {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&p, 1, milliseconds) == 1
    }

    /// Receives one datagram, waiting up to `milliseconds`; nil on timeout. Not for a socket with
    /// `coalescedReceive` (a train would arrive cut to its first `maxDatagram` bytes): use `receiveAll`.
    public func receive(timeoutMilliseconds: Int32) -> (bytes: [UInt8], from: Endpoint)? {
        guard waitReadable(milliseconds: timeoutMilliseconds) else { return nil }
        var result: ([UInt8], Endpoint)?
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        var buffer = [UInt8](repeating: 0, count: maxDatagram)
        let n = buffer.withUnsafeMutableBytes { b in
            withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(fd, b.baseAddress, b.count, 0, $0, &length) }
            }
        }
        if n >= 0, let from = Endpoint(storage: storage) { result = (Array(buffer[0..<n]), from) }
        return result
    }

    /// Sends one datagram; false when the kernel would not take it now.
    @discardableResult
    public func send(_ payload: [UInt8], to destination: Endpoint) -> Bool {
        let r: Int = destination.withSockAddr { addr, len in
            payload.withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT), addr, len) }
        }
        return r == payload.count
    }
}
