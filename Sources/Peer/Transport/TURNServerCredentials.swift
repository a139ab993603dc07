// A TURN server a transport allocates a relayed candidate on (RFC 8656 with long-term
// credentials, RFC 8489 §9.2), as a call's configuration names it, and its command-line form
// `USER:PASS@HOST:PORT` (`zonertc peer --turn`, `zonertc call --turn`).

import ZoneCore

/// A TURN server's address and the long-term credentials to use there.
public struct TURNServerCredentials: Hashable, Sendable {
    /// The server's listening address (UDP).
    public var server: Endpoint
    /// The long-term credential username.
    public var username: String
    /// The long-term credential password.
    public var password: String

    public init(server: Endpoint, username: String, password: String) {
        self.server = server
        self.username = username
        self.password = password
    }

    /// Parses `USER:PASS@HOST:PORT`: HOST an IPv4 literal or a bracketed IPv6 one (`[::1]:3478`),
    /// PORT 1–65535. The password is everything between the first `:` and the last `@`, so it
    /// may hold either; the user name may hold neither. Host names are not resolved.
    public init(parsing text: String) throws(TURNServerParseError) {
        guard let at = text.lastIndex(of: "@") else {
            throw TURNServerParseError("give USER:PASS@HOST:PORT (no '@' before the server)")
        }
        let credentials = text[..<at]
        guard let colon = credentials.firstIndex(of: ":") else {
            throw TURNServerParseError("the password is missing: give USER:PASS before the '@'")
        }
        let user = String(credentials[..<colon])
        let password = String(credentials[credentials.index(after: colon)...])
        guard !user.isEmpty else { throw TURNServerParseError("the user name is empty") }
        guard !password.isEmpty else { throw TURNServerParseError("the password is empty") }
        let address = String(text[text.index(after: at)...])
        let server: Endpoint
        do { server = try Endpoint(parsing: address) } catch {
            throw TURNServerParseError("the server '\(address)' is not IPV4:PORT or [IPV6]:PORT: \(error)")
        }
        guard server.port != 0 else { throw TURNServerParseError("the server's port must be 1–65535, not 0") }
        self.init(server: server, username: user, password: password)
    }
}

/// A `USER:PASS@HOST:PORT` that does not name a usable TURN server.
public struct TURNServerParseError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What was wrong, for a person to fix.
    public var reason: String

    /// `reason` never quotes the whole argument: the password is a secret.
    init(_ reason: String) {
        self.reason = reason
    }

    public var description: String { reason }
}
