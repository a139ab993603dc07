import CSystem
import Glibc
import ZoneCore

/// Non-blocking TCP socket helpers: listen, connect, read and write what the kernel takes.
public enum TCPSocket {
    /// Listens on `endpoint` (port 0: any free port); returns the fd and the bound endpoint.
    public static func listen(on endpoint: Endpoint, backlog: Int32 = 1024) throws -> (Int32, Endpoint) {
        let fd = socket(Int32(endpoint.family.socketFamily), Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SocketError("socket") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let bound: Int32 = endpoint.withSockAddr { addr, len in bind(fd, addr, len) }
        guard bound == 0 else {
            let e = SocketError("bind \(endpoint)")
            close(fd)
            throw e
        }
        guard Glibc.listen(fd, backlog) == 0 else {
            let e = SocketError("listen")
            close(fd)
            throw e
        }
        return (fd, try localEndpoint(fd))
    }

    /// The local address a socket is bound to.
    public static func localEndpoint(_ fd: Int32) throws -> Endpoint {
        var storage = sockaddr_storage()
        var len = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let r = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
        }
        guard r == 0, let e = Endpoint(storage: storage) else { throw SocketError("getsockname") }
        return e
    }

    /// Accepts one pending connection (non-blocking); nil when none is waiting.
    public static func accept(_ fd: Int32) throws -> (Int32, Endpoint?)? {
        var storage = sockaddr_storage()
        var len = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let c = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { cs_accept(fd, $0, &len) }
        }
        if c < 0 {
            if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ECONNABORTED { return nil }
            throw SocketError("accept4")
        }
        var one: Int32 = 1
        setsockopt(c, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        return (c, Endpoint(storage: storage))
    }

    /// A blocking connection to `endpoint` with TCP_NODELAY, for clients.
    public static func connectBlocking(to endpoint: Endpoint, timeoutSeconds: Int = 5) throws -> Int32 {
        let fd = socket(Int32(endpoint.family.socketFamily), Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SocketError("socket") }
        var tv = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        let r: Int32 = endpoint.withSockAddr { addr, len in Glibc.connect(fd, addr, len) }
        guard r == 0 else {
            let e = SocketError("connect \(endpoint)")
            close(fd)
            throw e
        }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        return fd
    }

    /// Sets (or clears, with 0) the receive timeout of a blocking socket.
    public static func setReceiveTimeout(_ fd: Int32, milliseconds: Int) {
        var tv = timeval(tv_sec: milliseconds / 1000, tv_usec: (milliseconds % 1000) * 1000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }
}
