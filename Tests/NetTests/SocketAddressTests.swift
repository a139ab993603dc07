import Glibc
import Net
import Testing
import ZoneCore

// Endpoints to and from the socket calls' address structures, checked against glibc's own layout.

@Test func socketFamilies() {
    #expect(AddressFamily.ipv4.socketFamily == AF_INET)
    #expect(AddressFamily.ipv6.socketFamily == AF_INET6)
}

@Test(arguments: ["1.2.3.4:5", "0.0.0.0:0", "[::1]:65535", "[2001:db8::17]:3478", "[::ffff:10.0.0.1]:80"])
func sockaddrRoundTrip(text: String) throws {
    let endpoint = try Endpoint(parsing: text)
    let (storage, length) = endpoint.sockaddrStorage
    #expect(Endpoint(storage: storage) == endpoint)
    #expect(Int32(storage.ss_family) == endpoint.family.socketFamily)
    let viaPointer = endpoint.withSockAddr { pointer, length in Endpoint(sockaddr: pointer, length: length) }
    #expect(viaPointer == endpoint)
    #expect(length == endpoint.withSockAddr { _, length in length })
    // A truncated length is refused rather than read past.
    #expect(endpoint.withSockAddr { pointer, length in Endpoint(sockaddr: pointer, length: length - 1) } == nil)
}

@Test func sockaddrLayoutMatchesGlibc() throws {
    let v4 = try Endpoint(parsing: "192.0.2.1:8080")
    v4.withSockAddr { pointer, length in
        #expect(length == socklen_t(MemoryLayout<sockaddr_in>.size))
        let sin = UnsafeRawPointer(pointer).loadUnaligned(as: sockaddr_in.self)
        #expect(sin.sin_port == htons(8080))
        #expect(sin.sin_addr.s_addr == inet_addr("192.0.2.1"))
    }
    let v6 = try Endpoint(parsing: "[2001:db8::1]:443")
    v6.withSockAddr { pointer, length in
        #expect(length == socklen_t(MemoryLayout<sockaddr_in6>.size))
        var sin6 = UnsafeRawPointer(pointer).loadUnaligned(as: sockaddr_in6.self)
        #expect(sin6.sin6_port == htons(443))
        var expected = in6_addr()
        _ = inet_pton(AF_INET6, "2001:db8::1", &expected)
        #expect(withUnsafeBytes(of: &sin6.sin6_addr) { Array($0) } == withUnsafeBytes(of: &expected) { Array($0) })
    }
}

@Test func sockaddrOtherFamilyIsNil() {
    var storage = sockaddr_storage()
    storage.ss_family = sa_family_t(AF_UNIX)
    #expect(Endpoint(storage: storage) == nil)
}

@Test func withSockAddrPassesTypedErrors() {
    struct Refused: Error {}
    let endpoint = Endpoint(address: .loopbackV4, port: 1)
    #expect(throws: Refused.self) {
        try endpoint.withSockAddr { (_, _) throws(Refused) in throw Refused() }
    }
}
