// A TURN server a transport allocates a relayed candidate on (RFC 8656 with long-term
// credentials, RFC 8489 §9.2), as a call's configuration names it.

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
}
