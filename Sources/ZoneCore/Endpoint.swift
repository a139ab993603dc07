// MARK: - Errors

/// Why a piece of text is not an IP address, an endpoint or a CIDR block.
///
/// One error type serves all three parsers because an endpoint or a CIDR block fails for the
/// same reasons as the address inside it; `kind` says what went wrong for code that needs to
/// react, `description` names the input and the problem for the person who typed it.
public struct EndpointParseError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What was wrong with the text.
    public enum Kind: Equatable, Sendable {
        /// The text was empty.
        case empty
        /// Something that looks like an IPv4 address but is not a strict dotted quad.
        case invalidIPv4
        /// Something that looks like an IPv6 address but is not one (RFC 4291 text forms).
        case invalidIPv6
        /// Neither an IPv4 nor an IPv6 address, e.g. a host name: names are never resolved here.
        case notAnIPAddress
        /// An IPv6 address followed by a port without brackets (`::1:5` is ambiguous).
        case unbracketedIPv6
        /// An endpoint without `:port`.
        case missingPort
        /// A port that is not a plain decimal number (signs, leading zeros, trailing characters).
        case invalidPort
        /// A decimal port above 65535.
        case portOutOfRange
        /// Characters where the text should have ended or a `:` should have followed.
        case unexpectedCharacters
        /// A CIDR prefix length that is not a decimal number in range for the address family.
        case invalidPrefixLength
        /// A CIDR block whose address has bits set beyond the prefix (`10.0.0.1/8`).
        case hostBitsSet
    }

    /// What was wrong.
    public var kind: Kind
    /// The whole text that was being parsed.
    public var input: String
    /// What the parser was reading: "endpoint", "IP address" or "CIDR block".
    public var subject: String
    /// The problem in words, without the input (the description adds it).
    public var detail: String

    public init(kind: Kind, input: String, subject: String, detail: String) {
        self.kind = kind
        self.input = input
        self.subject = subject
        self.detail = detail
    }

    public var description: String {
        // Quote and escape the input, and cut it short: it may come from a hostile peer.
        let shown = input.count > 100 ? String(input.prefix(100)) + "…" : input
        return "invalid \(subject) \(shown.debugDescription): \(detail)"
    }
}

/// A parse failure before the caller's input and subject are attached.
private struct AddressFailure: Error {
    var kind: EndpointParseError.Kind
    var detail: String

    init(_ kind: EndpointParseError.Kind, _ detail: String) {
        self.kind = kind
        self.detail = detail
    }

    func error(input: String, subject: String) -> EndpointParseError {
        EndpointParseError(kind: kind, input: input, subject: subject, detail: detail)
    }
}

// MARK: - Address family

/// IPv4 or IPv6.
public enum AddressFamily: Hashable, Sendable, CustomStringConvertible {
    /// IPv4: 4-byte addresses.
    case ipv4
    /// IPv6: 16-byte addresses.
    case ipv6

    /// The length of an address of this family in bytes.
    public var addressLength: Int {
        switch self {
        case .ipv4: 4
        case .ipv6: 16
        }
    }

    /// The number of bits in an address of this family (the longest CIDR prefix).
    public var bitWidth: Int { addressLength * 8 }

    public var description: String {
        switch self {
        case .ipv4: "IPv4"
        case .ipv6: "IPv6"
        }
    }
}

// MARK: - IP address

/// An IPv4 or IPv6 address, stored as a number whose most significant byte is the first octet on
/// the wire (`10.0.0.1` is `.v4(0x0A00_0001)`).
///
/// Text forms accepted by `init(parsing:)`:
/// - IPv4: exactly four decimal parts 0–255 separated by dots. Parts with leading zeros (`01`)
///   are rejected, because `inet_aton` and many other parsers read them as octal, so `010.0.0.1`
///   means 8.0.0.1 to some programs and 10.0.0.1 to others; rejecting keeps every accepted text
///   unambiguous. Signs, spaces, empty parts and the shortened forms `inet_aton` allows (`10.1`)
///   are rejected too.
/// - IPv6: the RFC 4291 section 2.2 forms: eight groups of 1–4 hex digits (either case), one
///   `::` standing for one or more zero groups, and an IPv4 dotted quad (same rules as above)
///   as the last 32 bits (`::ffff:1.2.3.4`). Zone identifiers (`fe80::1%eth0`) are rejected:
///   an address here names a peer, not an interface.
///
/// `description` prints the RFC 5952 canonical form: lowercase hex, no leading zeros in a group,
/// the longest run of two or more zero groups (the first of equal runs) replaced by `::`, and
/// IPv4-mapped addresses (`::ffff:0:0/96`) in mixed notation, `::ffff:1.2.3.4`.
public enum IPAddress: Hashable, Sendable, CustomStringConvertible {
    /// An IPv4 address; the first octet is the most significant byte.
    case v4(UInt32)
    /// An IPv6 address; the first octet is the most significant byte.
    case v6(IPv6Bits)

    /// 127.0.0.1.
    public static let loopbackV4 = IPAddress.v4(0x7F00_0001)
    /// ::1.
    public static let loopbackV6 = IPAddress.v6(1)
    /// 0.0.0.0, the IPv4 wildcard for binding.
    public static let anyV4 = IPAddress.v4(0)
    /// ::, the IPv6 wildcard for binding.
    public static let anyV6 = IPAddress.v6(0)

    /// Parses an IPv4 or IPv6 address (see the type's documentation for the accepted forms).
    public init(parsing text: String) throws(EndpointParseError) {
        do {
            self = try parseAddress(Array(text.utf8)[...])
        } catch {
            throw error.error(input: text, subject: "IP address")
        }
    }

    /// The address from its network-order bytes: 4 for IPv4, 16 for IPv6; nil for other lengths.
    public init?<Bytes: Collection<UInt8>>(bytes: Bytes) {
        switch bytes.count {
        case 4:
            self = .v4(bytes.reduce(0) { $0 << 8 | UInt32($1) })
        case 16:
            self = .v6(IPv6Bits(bytes.reduce(0) { $0 << 8 | UInt128($1) }))
        default:
            return nil
        }
    }

    /// The IPv4-mapped IPv6 address `::ffff:a.b.c.d` for an IPv4 address (dual-stack sockets
    /// report IPv4 peers this way); an IPv6 address is returned unchanged.
    public var ipv4Mapped: IPAddress {
        switch self {
        case .v4(let v): .v6(IPv6Bits(UInt128(0xFFFF) << 32 | UInt128(v)))
        case .v6: self
        }
    }

    /// The IPv4 address inside an IPv4-mapped IPv6 address; any other address unchanged.
    public var unmapped: IPAddress {
        if case .v6(let v) = self, v.value >> 32 == 0xFFFF {
            return .v4(UInt32(truncatingIfNeeded: v.value))
        }
        return self
    }

    /// IPv4 or IPv6.
    public var family: AddressFamily {
        switch self {
        case .v4: .ipv4
        case .v6: .ipv6
        }
    }

    /// The address in network order: 4 bytes for IPv4, 16 for IPv6 (as STUN and sockets carry it).
    public var addressBytes: [UInt8] {
        switch self {
        case .v4(let v):
            return (0..<4).map { UInt8(truncatingIfNeeded: v >> (24 - 8 * UInt32($0))) }
        case .v6(let v):
            return (0..<16).map { UInt8(truncatingIfNeeded: v.value >> (120 - 8 * UInt128($0))) }
        }
    }

    /// 127.0.0.0/8 or ::1; an IPv4-mapped address is judged by its IPv4 address.
    public var isLoopback: Bool {
        switch unmapped {
        case .v4(let v): v >> 24 == 127
        case .v6(let v): v.value == 1
        }
    }

    /// RFC 1918 private IPv4 (10/8, 172.16/12, 192.168/16) or an IPv6 unique local address
    /// (fc00::/7, RFC 4193); an IPv4-mapped address is judged by its IPv4 address.
    public var isPrivate: Bool {
        switch unmapped {
        case .v4(let v): v >> 24 == 10 || v >> 20 == 0xAC1 || v >> 16 == 0xC0A8
        case .v6(let v): v.value >> 121 == 0x7E
        }
    }

    /// 169.254.0.0/16 or fe80::/10; an IPv4-mapped address is judged by its IPv4 address.
    public var isLinkLocal: Bool {
        switch unmapped {
        case .v4(let v): v >> 16 == 0xA9FE
        case .v6(let v): v.value >> 118 == 0x3FA
        }
    }

    /// 0.0.0.0 or :: (the wildcard a socket binds to; never a valid peer).
    public var isUnspecified: Bool {
        switch self {
        case .v4(let v): v == 0
        case .v6(let v): v.value == 0
        }
    }

    public var description: String {
        switch self {
        case .v4(let v):
            return formatIPv4(v)
        case .v6(let v):
            return formatIPv6(v.value)
        }
    }
}

/// The 128 bits of an IPv6 address as two 64-bit halves.
///
/// Stored this way, not as `UInt128`, because Swift 6.3.1 debug builds misalign 16-byte-aligned
/// values captured by closures (a `movaps` on an 8-byte-aligned context): any closure capturing an
/// `Endpoint` crashed. Two `UInt64`s keep the type 8-byte aligned; arithmetic goes through `value`.
public struct IPv6Bits: Hashable, Sendable, ExpressibleByIntegerLiteral {
    public var high: UInt64
    public var low: UInt64

    public init(_ value: UInt128) {
        high = UInt64(truncatingIfNeeded: value >> 64)
        low = UInt64(truncatingIfNeeded: value)
    }

    public init(integerLiteral value: UInt64) {
        high = 0
        low = value
    }

    /// The address as one 128-bit number, first octet most significant.
    public var value: UInt128 { UInt128(high) << 64 | UInt128(low) }
}

// MARK: - Endpoint

/// An IP address and a UDP or TCP port.
///
/// The only text forms are `1.2.3.4:5` and `[::1]:5`, both for parsing and printing. The port is
/// decimal 0–65535 without sign or leading zeros; host names are rejected rather than resolved,
/// because resolving belongs to the caller, not to a value type.
public struct Endpoint: Hashable, Sendable, CustomStringConvertible {
    /// The IP address.
    public var address: IPAddress
    /// The port, in host order.
    public var port: UInt16

    public init(address: IPAddress, port: UInt16) {
        self.address = address
        self.port = port
    }

    /// Parses `a.b.c.d:port` or `[ipv6]:port`.
    public init(parsing text: String) throws(EndpointParseError) {
        do {
            self = try parseEndpoint(Array(text.utf8)[...])
        } catch {
            throw error.error(input: text, subject: "endpoint")
        }
    }

    /// IPv4 or IPv6.
    public var family: AddressFamily { address.family }

    /// The address in network order (4 or 16 bytes).
    public var addressBytes: [UInt8] { address.addressBytes }

    /// The same endpoint with an IPv4-mapped address turned into plain IPv4.
    public var unmapped: Endpoint { Endpoint(address: address.unmapped, port: port) }

    public var description: String {
        guard case .v4(let v) = address else { return "[\(address)]:\(port)" }
        // Written digit by digit: a call prints its relayed endpoints for the log.
        return withIPv4EndpointText(v, port) { String(decoding: $0, as: UTF8.self) }
    }

    /// Appends the UTF-8 of `description` to `bytes`; an IPv4 endpoint digit by digit, without a
    /// string, and appended at once (the TURN server prints two endpoints into every nonce it
    /// mints or checks; appending byte by byte checked the array's storage at every digit).
    public func appendDescription(to bytes: inout [UInt8]) {
        guard case .v4(let v) = address else {
            bytes.append(contentsOf: description.utf8)
            return
        }
        withIPv4EndpointText(v, port) { bytes.append(contentsOf: $0) }
    }
}

/// `body` with the text of the IPv4 endpoint `v`:`port`, written digit by digit into a small
/// buffer on the stack.
private func withIPv4EndpointText<R>(_ v: UInt32, _ port: UInt16, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 21) { buffer in  // "255.255.255.255:65535"
        var count = 0
        let emit = { (byte: UInt8) in
            buffer[count] = byte
            count += 1
        }
        writeIPv4(v, emit)
        emit(UInt8(ascii: ":"))
        writeDecimal(port, emit)
        return body(UnsafeBufferPointer(rebasing: buffer[..<count]))
    }
}

/// The decimal digits of `value`, without leading zeros, byte by byte to `emit`.
@inline(__always)
private func writeDecimal(_ value: UInt16, _ emit: (UInt8) -> Void) {
    var divisor: UInt16 = 10_000
    while divisor > 1, divisor > value { divisor /= 10 }
    while divisor > 0 {
        emit(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: value / divisor % 10))
        divisor /= 10
    }
}

// MARK: - CIDR

/// A block of addresses: a network address and a prefix length, `10.0.0.0/8` or `fc00::/7`.
///
/// Parsing rejects addresses with bits set beyond the prefix (`10.0.0.1/8`): in an allow or deny
/// list that is almost always a typo, and silently widening it would change what is allowed.
/// A bare address parses as a single-address block (`/32` or `/128`).
public struct CIDR: Hashable, Sendable, CustomStringConvertible {
    /// The first address of the block (host bits are always zero).
    public let network: IPAddress
    /// The number of leading bits that every address in the block shares.
    public let prefixLength: Int

    /// The block of `prefixLength` bits containing `address` (host bits are cleared);
    /// nil when `prefixLength` is negative or longer than the address.
    public init?(address: IPAddress, prefixLength: Int) {
        guard prefixLength >= 0, prefixLength <= address.family.bitWidth else { return nil }
        self.network = masked(address, prefixLength)
        self.prefixLength = prefixLength
    }

    /// Parses `address/prefix` (decimal prefix, no leading zeros) or a bare address.
    public init(parsing text: String) throws(EndpointParseError) {
        do {
            self = try parseCIDR(Array(text.utf8)[...])
        } catch {
            throw error.error(input: text, subject: "CIDR block")
        }
    }

    /// IPv4 or IPv6.
    public var family: AddressFamily { network.family }

    /// Whether `address` lies in this block.
    ///
    /// An IPv4 address and its IPv4-mapped IPv6 form (`::ffff:a.b.c.d`) are the same peer, so
    /// either form matches: `10.0.0.0/8` contains `::ffff:10.1.2.3`, and `::ffff:0:0/96` (or
    /// `::/0`) contains `10.1.2.3`. A deny list therefore cannot be bypassed by writing an IPv4
    /// peer in mapped form.
    public func contains(_ address: IPAddress) -> Bool {
        switch (network, address) {
        case (.v4, .v4), (.v6, .v6):
            return masked(address, prefixLength) == network
        case (.v4, .v6):
            let plain = address.unmapped
            return plain.family == .ipv4 && masked(plain, prefixLength) == network
        case (.v6, .v4):
            return masked(address.ipv4Mapped, prefixLength) == network
        }
    }

    public var description: String { "\(network)/\(prefixLength)" }
}

private func masked(_ address: IPAddress, _ prefixLength: Int) -> IPAddress {
    switch address {
    case .v4(let v):
        return .v4(prefixLength == 0 ? 0 : v & (UInt32.max << UInt32(32 - prefixLength)))
    case .v6(let v):
        return .v6(IPv6Bits(prefixLength == 0 ? 0 : v.value & (UInt128.max << UInt128(128 - prefixLength))))
    }
}

// MARK: - Parsing

private let colon = UInt8(ascii: ":")
private let dot = UInt8(ascii: ".")

private func isDigit(_ c: UInt8) -> Bool { c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") }

/// A piece of the input in quotes, with control characters escaped so a message stays one line.
private func quoted(_ bytes: ArraySlice<UInt8>) -> String { String(decoding: bytes, as: UTF8.self).debugDescription }

/// A decimal number without sign or leading zeros, at most `limit`; nil if not that.
private func parseDecimal(_ bytes: ArraySlice<UInt8>, limit: Int) -> Int? {
    guard !bytes.isEmpty, bytes.count <= 6, bytes.allSatisfy(isDigit) else { return nil }
    guard bytes.count == 1 || bytes.first != UInt8(ascii: "0") else { return nil }
    let value = bytes.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
    return value <= limit ? value : nil
}

private func parseAddress(_ bytes: ArraySlice<UInt8>) throws(AddressFailure) -> IPAddress {
    if bytes.isEmpty { throw AddressFailure(.empty, "empty text") }
    if bytes.contains(colon) { return .v6(IPv6Bits(try parseIPv6(bytes))) }
    if bytes.allSatisfy({ isDigit($0) || $0 == dot }) { return .v4(try parseIPv4(bytes)) }
    throw AddressFailure(
        .notAnIPAddress, "not a numeric IPv4 or IPv6 address (host names are not resolved here)")
}

private func parseIPv4(_ bytes: ArraySlice<UInt8>) throws(AddressFailure) -> UInt32 {
    let parts = bytes.split(separator: dot, omittingEmptySubsequences: false)
    guard parts.count == 4 else {
        throw AddressFailure(.invalidIPv4, "an IPv4 address has 4 parts separated by '.', found \(parts.count)")
    }
    var value: UInt32 = 0
    for (index, part) in parts.enumerated() {
        let ordinal = index + 1
        if part.isEmpty { throw AddressFailure(.invalidIPv4, "part \(ordinal) of the IPv4 address is empty") }
        guard part.allSatisfy(isDigit) else {
            throw AddressFailure(.invalidIPv4, "part \(ordinal) \(quoted(part)) is not a decimal number")
        }
        if part.count > 1 && part.first == UInt8(ascii: "0") {
            throw AddressFailure(
                .invalidIPv4,
                "part \(ordinal) \(quoted(part)) has a leading zero (some parsers read that as octal)")
        }
        guard let octet = parseDecimal(part, limit: 255) else {
            throw AddressFailure(.invalidIPv4, "part \(ordinal) \(quoted(part)) is greater than 255")
        }
        value = value << 8 | UInt32(octet)
    }
    return value
}

private func parseIPv6(_ bytes: ArraySlice<UInt8>) throws(AddressFailure) -> UInt128 {
    if bytes.contains(UInt8(ascii: "%")) {
        throw AddressFailure(.invalidIPv6, "zone identifiers ('%' and an interface) are not supported")
    }
    // Find the one '::', if any; the groups before and after it are parsed separately.
    var doubleColon: Int?
    var i = bytes.startIndex
    while i + 1 < bytes.endIndex {
        if bytes[i] == colon && bytes[i + 1] == colon {
            if doubleColon != nil { throw AddressFailure(.invalidIPv6, "more than one '::'") }
            doubleColon = i
            i += 2
        } else {
            i += 1
        }
    }
    let groups: [UInt16]
    if let dc = doubleColon {
        let head = try parseGroups(bytes[bytes.startIndex..<dc], allowIPv4: false)
        let tail = try parseGroups(bytes[(dc + 2)...], allowIPv4: true)
        guard head.count + tail.count <= 7 else {
            throw AddressFailure(
                .invalidIPv6, "\(head.count + tail.count) groups besides '::', at most 7 fit with it")
        }
        groups = head + Array(repeating: 0, count: 8 - head.count - tail.count) + tail
    } else {
        groups = try parseGroups(bytes, allowIPv4: true)
        guard groups.count == 8 else {
            throw AddressFailure(.invalidIPv6, "\(groups.count) groups of 16 bits; without '::' there must be 8")
        }
    }
    return groups.reduce(0) { $0 << 16 | UInt128($1) }
}

/// Parses `x:x:…` (possibly empty), with an optional dotted quad as the last part.
private func parseGroups(_ bytes: ArraySlice<UInt8>, allowIPv4: Bool) throws(AddressFailure) -> [UInt16] {
    if bytes.isEmpty { return [] }
    let parts = bytes.split(separator: colon, omittingEmptySubsequences: false)
    var groups: [UInt16] = []
    for (index, part) in parts.enumerated() {
        if part.isEmpty {
            throw AddressFailure(.invalidIPv6, "empty group (a single ':' at either end, or ':::')")
        }
        if part.contains(dot) {
            guard allowIPv4 && index == parts.count - 1 else {
                throw AddressFailure(
                    .invalidIPv6, "the embedded IPv4 address \(quoted(part)) must be the last 32 bits")
            }
            let v4 = try parseIPv4(part)
            groups.append(UInt16(v4 >> 16))
            groups.append(UInt16(truncatingIfNeeded: v4))
            continue
        }
        guard part.count <= 4 else {
            throw AddressFailure(.invalidIPv6, "group \(quoted(part)) has more than 4 hex digits")
        }
        var value: UInt16 = 0
        for c in part {
            guard let digit = Hex.value(c) else {
                throw AddressFailure(.invalidIPv6, "group \(quoted(part)) is not hexadecimal")
            }
            value = value << 4 | UInt16(digit)
        }
        groups.append(value)
    }
    if groups.count > 8 {
        throw AddressFailure(.invalidIPv6, "\(groups.count) groups of 16 bits, more than the 8 of an address")
    }
    return groups
}

private func parseEndpoint(_ bytes: ArraySlice<UInt8>) throws(AddressFailure) -> Endpoint {
    if bytes.isEmpty { throw AddressFailure(.empty, "empty text; expected \"a.b.c.d:port\" or \"[ipv6]:port\"") }
    let address: IPAddress
    let rest: ArraySlice<UInt8>
    if bytes.first == UInt8(ascii: "[") {
        guard let close = bytes.firstIndex(of: UInt8(ascii: "]")) else {
            throw AddressFailure(.invalidIPv6, "'[' without a closing ']'")
        }
        let inside = bytes[(bytes.startIndex + 1)..<close]
        guard inside.contains(colon) else {
            throw AddressFailure(.invalidIPv6, "brackets hold IPv6 addresses only; write IPv4 as \"a.b.c.d:port\"")
        }
        address = .v6(IPv6Bits(try parseIPv6(inside)))
        rest = bytes[(close + 1)...]
        if rest.isEmpty { throw AddressFailure(.missingPort, "missing \":port\" after the ']'") }
        guard rest.first == colon else {
            throw AddressFailure(.unexpectedCharacters, "\(quoted(rest)) after the ']'; expected \":port\"")
        }
    } else {
        let colons = bytes.lazy.filter { $0 == colon }.count
        if colons > 1 {
            throw AddressFailure(
                .unbracketedIPv6, "an IPv6 address with a port needs brackets, as in \"[::1]:443\"")
        }
        let host = colons == 0 ? bytes : bytes[..<bytes.firstIndex(of: colon)!]
        address = try parseAddress(host)
        rest = bytes[host.endIndex...]
        if rest.isEmpty { throw AddressFailure(.missingPort, "missing \":port\" after the address") }
    }
    return Endpoint(address: address, port: try parsePort(rest.dropFirst()))
}

private func parsePort(_ bytes: ArraySlice<UInt8>) throws(AddressFailure) -> UInt16 {
    if bytes.isEmpty { throw AddressFailure(.missingPort, "empty port after ':'") }
    guard bytes.allSatisfy(isDigit) else {
        throw AddressFailure(.invalidPort, "port \(quoted(bytes)) is not a decimal number")
    }
    if bytes.count > 1 && bytes.first == UInt8(ascii: "0") {
        throw AddressFailure(.invalidPort, "port \(quoted(bytes)) has a leading zero")
    }
    guard let port = parseDecimal(bytes, limit: 65535) else {
        throw AddressFailure(.portOutOfRange, "port \(String(decoding: bytes, as: UTF8.self)) is greater than 65535")
    }
    return UInt16(port)
}

private func parseCIDR(_ bytes: ArraySlice<UInt8>) throws(AddressFailure) -> CIDR {
    guard let slash = bytes.firstIndex(of: UInt8(ascii: "/")) else {
        let address = try parseAddress(bytes)
        return CIDR(address: address, prefixLength: address.family.bitWidth)!
    }
    let address = try parseAddress(bytes[..<slash])
    let digits = bytes[(slash + 1)...]
    let width = address.family.bitWidth
    guard let length = parseDecimal(digits, limit: width) else {
        throw AddressFailure(
            .invalidPrefixLength,
            "prefix length \(quoted(digits)) is not a decimal number from 0 to \(width)"
                + " (no leading zeros) for an \(address.family) address")
    }
    let block = CIDR(address: address, prefixLength: length)!
    guard block.network == address else {
        throw AddressFailure(
            .hostBitsSet, "the address has bits set beyond the /\(length) prefix; did you mean \"\(block)\"?")
    }
    return block
}

// MARK: - Printing

private func formatIPv4(_ v: UInt32) -> String {
    // Digit by digit into one small buffer (the text fits a small string: no allocation). Endpoints
    // are printed where it matters: every TURN request's nonce check prints two.
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 15) { buffer in
        var count = 0
        writeIPv4(v) { byte in
            buffer[count] = byte
            count += 1
        }
        return String(decoding: UnsafeBufferPointer(rebasing: buffer[..<count]), as: UTF8.self)
    }
}

/// The dotted-decimal text of `v`, byte by byte, to `emit` (`formatIPv4`, `Endpoint.appendDescription`).
@inline(__always)
private func writeIPv4(_ v: UInt32, _ emit: (UInt8) -> Void) {
    for shift in stride(from: UInt32(24), through: 0, by: -8) {
        if shift != 24 { emit(UInt8(ascii: ".")) }
        let octet = UInt8(truncatingIfNeeded: v >> shift)
        if octet >= 100 { emit(UInt8(ascii: "0") + octet / 100) }
        if octet >= 10 { emit(UInt8(ascii: "0") + octet / 10 % 10) }
        emit(UInt8(ascii: "0") + octet % 10)
    }
}

private func formatIPv6(_ v: UInt128) -> String {
    // RFC 5952 section 5: IPv4-mapped addresses keep their IPv4 part readable.
    if v >> 32 == 0xFFFF { return "::ffff:" + formatIPv4(UInt32(truncatingIfNeeded: v)) }
    let groups = (0..<8).map { UInt16(truncatingIfNeeded: v >> (112 - 16 * UInt128($0))) }
    // RFC 5952 section 4.2: compress the longest run of at least two zero groups, the first on a tie.
    var bestStart = -1
    var bestLength = 1
    var runStart = 0
    for index in 0...8 {
        if index < 8 && groups[index] == 0 { continue }
        let length = index - runStart
        if length > bestLength {
            bestStart = runStart
            bestLength = length
        }
        runStart = index + 1
    }
    func hex(_ range: Range<Int>) -> String {
        groups[range].map { Hex.string($0) }.joined(separator: ":")
    }
    if bestStart < 0 { return hex(0..<8) }
    return hex(0..<bestStart) + "::" + hex((bestStart + bestLength)..<8)
}
