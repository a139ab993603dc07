import Glibc
import ZoneCore

// Endpoints as the socket calls take and give them (`sockaddr_in`, `sockaddr_in6`, `sockaddr_storage`):
// here beside the sockets, so that ZoneCore's addresses stay plain values with no socket API in them.

extension AddressFamily {
    /// The `AF_INET` / `AF_INET6` constant for socket calls.
    public var socketFamily: Int32 {
        switch self {
        case .ipv4: AF_INET
        case .ipv6: AF_INET6
        }
    }
}

extension Endpoint {
    /// Reads a `sockaddr_in` or `sockaddr_in6` of `length` bytes, as `recvfrom(2)`,
    /// `accept(2)` or `getsockname(2)` fill it in; nil for other families or a short length.
    ///
    /// The IPv6 flow label and scope id are dropped (see `withSockAddr`).
    public init?(sockaddr pointer: UnsafePointer<sockaddr>, length: socklen_t) {
        let raw = UnsafeRawPointer(pointer)
        guard Int(length) >= MemoryLayout<sa_family_t>.size else { return nil }
        switch Int32(pointer.pointee.sa_family) {
        case AF_INET:
            guard Int(length) >= MemoryLayout<sockaddr_in>.size else { return nil }
            let sin = raw.loadUnaligned(as: sockaddr_in.self)
            self.init(address: .v4(UInt32(bigEndian: sin.sin_addr.s_addr)), port: UInt16(bigEndian: sin.sin_port))
        case AF_INET6:
            guard Int(length) >= MemoryLayout<sockaddr_in6>.size else { return nil }
            var sin6 = raw.loadUnaligned(as: sockaddr_in6.self)
            let address = withUnsafeBytes(of: &sin6.sin6_addr) { IPAddress(bytes: $0)! }
            self.init(address: address, port: UInt16(bigEndian: sin6.sin6_port))
        default:
            return nil
        }
    }

    /// Reads a `sockaddr_storage` holding a `sockaddr_in` or `sockaddr_in6`; nil otherwise.
    public init?(storage: sockaddr_storage) {
        var storage = storage
        let endpoint = withUnsafePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Endpoint(sockaddr: $0, length: socklen_t(MemoryLayout<sockaddr_storage>.size))
            }
        }
        guard let endpoint else { return nil }
        self = endpoint
    }

    /// The endpoint as a `sockaddr_storage` and the length of the `sockaddr_in` or
    /// `sockaddr_in6` inside it, for calls that keep the address around.
    public var sockaddrStorage: (storage: sockaddr_storage, length: socklen_t) {
        var storage = sockaddr_storage()
        let length = withUnsafeMutableBytes(of: &storage) { raw in
            withSockAddr { pointer, length in
                raw.copyMemory(from: UnsafeRawBufferPointer(start: pointer, count: Int(length)))
                return length
            }
        }
        return (storage, length)
    }

    /// Calls `body` with a pointer to this endpoint as a `sockaddr_in` or `sockaddr_in6` and its
    /// length, for `bind(2)`, `connect(2)` and `sendto(2)`. The pointer is valid only inside `body`.
    ///
    /// IPv6 addresses get flow label 0 and scope id 0, so a link-local peer needs its interface
    /// chosen some other way (the socket's bound interface).
    public func withSockAddr<Result, Failure: Error>(
        _ body: (UnsafePointer<sockaddr>, socklen_t) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        switch address {
        case .v4(let v):
            var sin = sockaddr_in()
            sin.sin_family = sa_family_t(AF_INET)
            sin.sin_port = port.bigEndian
            sin.sin_addr = in_addr(s_addr: v.bigEndian)
            return try withUnsafePointer(to: &sin) { (pointer) throws(Failure) -> Result in
                try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { (sa) throws(Failure) -> Result in
                    try body(sa, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        case .v6:
            var sin6 = sockaddr_in6()
            sin6.sin6_family = sa_family_t(AF_INET6)
            sin6.sin6_port = port.bigEndian
            let bytes = address.addressBytes
            withUnsafeMutableBytes(of: &sin6.sin6_addr) { $0.copyBytes(from: bytes) }
            return try withUnsafePointer(to: &sin6) { (pointer) throws(Failure) -> Result in
                try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { (sa) throws(Failure) -> Result in
                    try body(sa, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        }
    }
}
