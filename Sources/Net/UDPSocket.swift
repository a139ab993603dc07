import CSystem
import Glibc
import ZoneCore

/// A non-blocking UDP socket with batched receive and send (recvmmsg/sendmmsg), for the peer's
/// and the relay's datagram paths. It moves datagrams; what they mean is a machine's business.
public final class UDPSocket {
    public let fd: Int32
    public let localEndpoint: Endpoint
    /// The largest datagram read; longer ones are truncated by the kernel.
    public let maxDatagram: Int
    private let batch: Int
    private var buffers: [UInt8]
    private var lengths: [Int]
    private var sources: [sockaddr_storage]
    private var sourceLengths: [socklen_t]

    /// Binds to `endpoint` (port 0: any free port). `reusePort` lets several sockets share a port
    /// (SO_REUSEPORT), one per thread.
    public init(bind endpoint: Endpoint, reusePort: Bool = false, batch: Int = 32, maxDatagram: Int = 2048) throws {
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
        self.batch = min(batch, 64)
        self.maxDatagram = maxDatagram
        buffers = [UInt8](repeating: 0, count: self.batch * maxDatagram)
        lengths = [Int](repeating: 0, count: self.batch)
        sources = [sockaddr_storage](repeating: sockaddr_storage(), count: self.batch)
        sourceLengths = [socklen_t](repeating: 0, count: self.batch)
    }

    deinit { close(fd) }

    /// Reads every waiting datagram, up to a batch at a time, calling `body` with each payload
    /// (valid only during the call) and its source. Returns how many were read.
    @discardableResult
    public func receiveAll(_ body: (UnsafeRawBufferPointer, Endpoint) -> Void) -> Int {
        var total = 0
        while true {
            let n = buffers.withUnsafeMutableBufferPointer { b in
                lengths.withUnsafeMutableBufferPointer { l in
                    sources.withUnsafeMutableBufferPointer { s in
                        sourceLengths.withUnsafeMutableBufferPointer { sl in
                            cs_recvmmsg(fd, b.baseAddress, maxDatagram, UInt32(batch), l.baseAddress,
                                        s.baseAddress, sl.baseAddress)
                        }
                    }
                }
            }
            guard n > 0 else { return total }
            buffers.withUnsafeBytes { raw in
                for i in 0..<Int(n) {
                    guard let from = Endpoint(storage: sources[i]) else { continue }
                    body(UnsafeRawBufferPointer(rebasing: raw[(i * maxDatagram)..<(i * maxDatagram + lengths[i])]), from)
                }
            }
            total += Int(n)
            if Int(n) < batch { return total }
        }
    }

    /// Sends datagrams in one system call where it can; returns how many the kernel took
    /// (the rest would block: UDP drops them, as a full path would).
    @discardableResult
    public func send(_ datagrams: [(payload: [UInt8], to: Endpoint)]) -> Int {
        var sent = 0
        var start = 0
        while start < datagrams.count {
            let chunk = datagrams[start..<min(datagrams.count, start + 64)]
            var flat: [UInt8] = []
            var offsets: [Int] = [], sizes: [Int] = []
            var destinations: [sockaddr_storage] = [], destinationLengths: [socklen_t] = []
            for d in chunk {
                offsets.append(flat.count)
                sizes.append(d.payload.count)
                flat.append(contentsOf: d.payload)
                let address = d.to.sockaddrStorage
                destinations.append(address.storage)
                destinationLengths.append(address.length)
            }
            let n = cs_sendmmsg(fd, flat, offsets, sizes, destinations, destinationLengths, UInt32(chunk.count))
            if n <= 0 { return sent }
            sent += Int(n)
            if Int(n) < chunk.count { return sent }
            start += chunk.count
        }
        return sent
    }

    /// Waits until a datagram is waiting or `milliseconds` pass (poll(2)); true when readable.
    /// For blocking clients and tests; an event loop uses its own readiness instead.
    public func waitReadable(milliseconds: Int32) -> Bool {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&p, 1, milliseconds) == 1
    }

    /// Receives one datagram, waiting up to `milliseconds`; nil on timeout.
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
