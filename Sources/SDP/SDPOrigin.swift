// The origin line, `o=`, RFC 8866 §5.2; its JSEP values, RFC 8829 §5.2.1.

import ZoneCore

/// `o=<username> <sess-id> <sess-version> <nettype> <addrtype> <unicast-address>`.
///
/// JSEP fixes the username to `-`, the id to a random 63-bit number and the address to a
/// placeholder; the version goes up by one each time a side changes its description.
public struct SDPOrigin: Hashable, Sendable, CustomStringConvertible {
    /// The user on the originating host, `-` when there is none.
    public var username: String
    /// Identifies the session; constant for its lifetime.
    public var sessionID: UInt64
    /// Increases whenever the description changes.
    public var sessionVersion: UInt64
    /// `IN` (Internet).
    public var networkType: String
    /// `IP4` or `IP6`.
    public var addressType: String
    /// The originating host's address; JSEP stacks write a placeholder such as 127.0.0.1.
    public var address: String

    public init(
        username: String = "-", sessionID: UInt64, sessionVersion: UInt64,
        networkType: String = "IN", addressType: String = "IP4", address: String = "127.0.0.1"
    ) {
        self.username = username
        self.sessionID = sessionID
        self.sessionVersion = sessionVersion
        self.networkType = networkType
        self.addressType = addressType
        self.address = address
    }

    /// The value of the line, without `o=`.
    public var description: String {
        var text = TextBuffer(capacity: 64)
        write(to: &text)
        return text.string
    }

    /// Writes `description` piece by piece (every description prints its origin).
    func write(to text: inout TextBuffer) {
        text.append(username)
        text.ascii(" ")
        text.decimal(sessionID)
        text.ascii(" ")
        text.decimal(sessionVersion)
        text.ascii(" ")
        text.append(networkType)
        text.ascii(" ")
        text.append(addressType)
        text.ascii(" ")
        text.append(address)
    }

    static func parse(_ value: ArraySlice<UInt8>) throws(SDPLineFailure) -> SDPOrigin {
        let parts = SDPGrammar.fields(value)
        guard parts.count == 6 else {
            throw SDPLineFailure(
                .invalidOrigin,
                "o= needs 6 fields (username, session id, version, network type, address type, address),"
                    + " found \(parts.count)")
        }
        guard SDPGrammar.all(parts[0], SDPGrammar.isVisible) else {
            throw SDPLineFailure(.invalidOrigin, "the username has characters other than visible ASCII")
        }
        guard let id = SDPGrammar.decimal(parts[1], as: UInt64.self) else {
            throw SDPLineFailure(.invalidOrigin, "the session id \(quote(parts[1])) is not a 64-bit decimal number")
        }
        guard let version = SDPGrammar.decimal(parts[2], as: UInt64.self) else {
            throw SDPLineFailure(
                .invalidOrigin, "the session version \(quote(parts[2])) is not a 64-bit decimal number")
        }
        guard SDPGrammar.isToken(parts[3]), SDPGrammar.isToken(parts[4]), SDPGrammar.all(parts[5], SDPGrammar.isVisible)
        else {
            throw SDPLineFailure(.invalidOrigin, "the network type, address type or address is not a token")
        }
        return SDPOrigin(
            username: SDPGrammar.string(parts[0]), sessionID: id, sessionVersion: version,
            networkType: SDPGrammar.string(parts[3]), addressType: SDPGrammar.string(parts[4]),
            address: SDPGrammar.string(parts[5]))
    }
}

/// A token from a line, quoted for an error message.
func quote(_ bytes: ArraySlice<UInt8>) -> String {
    SDPGrammar.quoted(SDPGrammar.string(bytes), limit: 60)
}
