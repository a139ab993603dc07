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
