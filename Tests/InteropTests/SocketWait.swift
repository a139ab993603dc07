// Waiting for datagrams on real UDP sockets, on the dedicated thread: poll(2) over the sockets
// (and optionally a child's stdout) until something is readable or a deadline passes.

import Glibc
import Net
import ZoneCore

/// One received datagram: bytes, source, and the local socket it arrived on.
struct ReceivedDatagram {
    var bytes: [UInt8]
    var from: Endpoint
    var to: Endpoint
}

enum SocketWait {
    /// A UDP port on 127.0.0.1 that was free a moment ago (bound, read, closed).
    static func freePort() throws -> UInt16 {
        let probe = try UDPSocket(bind: Endpoint(address: .loopbackV4, port: 0))
        return probe.localEndpoint.port
    }

    /// A port on 127.0.0.1 that was free for both UDP and TCP a moment ago (coturn binds both).
    static func freeUDPAndTCPPort() throws -> UInt16 {
        for _ in 0..<50 {
            let port = try freePort()
            if tcpPortIsFree(port) { return port }
        }
        throw InteropFailure("no loopback port free for both UDP and TCP in 50 tries")
    }

    /// Whether a TCP socket can bind (and listen on) 127.0.0.1:`port` right now.
    private static func tcpPortIsFree(_ port: UInt16) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        return bound == 0 && listen(fd, 1) == 0
    }

    /// Waits until one of `sockets` (or `extra`) is readable or `deadline` (wall clock) passes,
    /// then reads every waiting datagram. `extraReadable` tells whether `extra` was readable.
    static func wait(_ sockets: [UDPSocket], extra: Int32? = nil, until deadline: Instant, clock: WallClock)
        -> (datagrams: [ReceivedDatagram], extraReadable: Bool) {
        var fds = sockets.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
        if let extra { fds.append(pollfd(fd: extra, events: Int16(POLLIN), revents: 0)) }
        let left = deadline - clock.now()
        let ms = Int32(clamping: max(0, (left.nanoseconds + 999_999) / 1_000_000))
        _ = poll(&fds, nfds_t(fds.count), ms)
        var datagrams: [ReceivedDatagram] = []
        for (index, socket) in sockets.enumerated() where fds[index].revents != 0 {
            socket.receiveAll { bytes, from in
                datagrams.append(ReceivedDatagram(bytes: Array(bytes), from: from, to: socket.localEndpoint))
            }
        }
        let extraReadable = extra != nil && fds[sockets.count].revents != 0
        return (datagrams, extraReadable)
    }
}
