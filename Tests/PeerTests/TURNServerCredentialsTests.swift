// `USER:PASS@HOST:PORT`, as `zonertc call --turn` and `zonertc peer --turn` take it.

import Peer
import Testing
import ZoneCore

@Suite struct TURNServerCredentialsTests {
    @Test func ipv4AndBracketedIPv6() throws {
        let v4 = try TURNServerCredentials(parsing: "u:p@127.0.0.1:3478")
        #expect(v4 == TURNServerCredentials(server: Endpoint(address: .loopbackV4, port: 3478), username: "u",
                                            password: "p"))
        let v6 = try TURNServerCredentials(parsing: "alice:s3cret@[::1]:65535")
        #expect(v6.server == Endpoint(address: .loopbackV6, port: 65535) && v6.username == "alice")
        // The password runs to the last '@' and may hold ':' and '@'.
        let odd = try TURNServerCredentials(parsing: "bob:a:b@c@127.0.0.1:1")
        #expect(odd.username == "bob" && odd.password == "a:b@c" && odd.server.port == 1)
    }

    @Test(arguments: [
        ("127.0.0.1:3478", "no '@'"),
        ("user@127.0.0.1:3478", "the password is missing"),
        (":p@127.0.0.1:3478", "the user name is empty"),
        ("u:@127.0.0.1:3478", "the password is empty"),
        ("u:p@::1:3478", "is not IPV4:PORT or [IPV6]:PORT"),
        ("u:p@turn.example.org:3478", "is not IPV4:PORT or [IPV6]:PORT"),
        ("u:p@127.0.0.1", "is not IPV4:PORT or [IPV6]:PORT"),
        ("u:p@127.0.0.1:65536", "is not IPV4:PORT or [IPV6]:PORT"),
        ("u:p@127.0.0.1:0", "must be 1–65535"),
    ])
    func badFormsSayWhatIsWrong(text: String, message: String) {
        do {
            _ = try TURNServerCredentials(parsing: text)
            Issue.record("'\(text)' was accepted")
        } catch {
            #expect(error.reason.contains(message), "\(error.reason)")
            #expect(!error.reason.contains("p@"), "the password is echoed: \(error.reason)")
        }
    }
}
