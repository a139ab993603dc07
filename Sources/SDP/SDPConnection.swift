// Connection data, `c=`, RFC 8866 §5.7; JSEP's placeholder `IN IP4 0.0.0.0`, RFC 8829 §5.2.1.

import ZoneCore

/// `c=<nettype> <addrtype> <connection-address>`.
///
/// With ICE the real addresses travel in candidates, so JSEP stacks write `IN IP4 0.0.0.0` (or
/// the default candidate's address, as aiortc does). The address is kept as text: it may carry
/// a multicast TTL (`/127`) or be a host name.
public struct SDPConnection: Hashable, Sendable, CustomStringConvertible {
    /// `IN`.
    public var networkType: String
    /// `IP4` or `IP6`.
    public var addressType: String
    /// The address, as written.
    public var address: String

    public init(networkType: String = "IN", addressType: String = "IP4", address: String) {
        self.networkType = networkType
        self.addressType = addressType
        self.address = address
    }

    /// `IN IP4 0.0.0.0`, the placeholder JSEP uses before a default candidate is known.
    public static let placeholder = SDPConnection(address: "0.0.0.0")

    /// The value of the line, without `c=`.
    public var description: String {
        var text = TextBuffer(capacity: 48)
        write(to: &text)
        return text.string
    }

    /// Writes `description` piece by piece (see `SDPOrigin.write(to:)`).
    func write(to text: inout TextBuffer) {
        text.append(networkType)
        text.ascii(" ")
        text.append(addressType)
        text.ascii(" ")
        text.append(address)
    }

    /// Writes `c=`, `description`, CRLF.
    func writeLine(to text: inout TextBuffer) {
        text.ascii("c=")
        write(to: &text)
        text.ascii("\r\n")
    }

    static func parse(_ value: ArraySlice<UInt8>) throws(SDPLineFailure) -> SDPConnection {
        let parts = SDPGrammar.fields(value)
        guard parts.count == 3 else {
            throw SDPLineFailure(
                .invalidConnection, "c= needs 3 fields (network type, address type, address), found \(parts.count)")
        }
        guard SDPGrammar.isToken(parts[0]), SDPGrammar.isToken(parts[1]), SDPGrammar.all(parts[2], SDPGrammar.isVisible)
        else {
            throw SDPLineFailure(.invalidConnection, "the network type, address type or address is not a token")
        }
        return SDPConnection(
            networkType: SDPGrammar.string(parts[0]), addressType: SDPGrammar.string(parts[1]),
            address: SDPGrammar.string(parts[2]))
    }
}
