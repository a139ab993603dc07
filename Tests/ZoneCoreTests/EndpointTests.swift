import Glibc
import Testing
@testable import ZoneCore

// MARK: - IPv4

@Test(arguments: [
    ("0.0.0.0", UInt32(0)),
    ("1.2.3.4", 0x0102_0304),
    ("10.0.0.1", 0x0A00_0001),
    ("127.0.0.1", 0x7F00_0001),
    ("255.255.255.255", 0xFFFF_FFFF),
    ("192.168.100.200", 0xC0A8_64C8),
])
func ipv4Valid(text: String, value: UInt32) throws {
    let address = try IPAddress(parsing: text)
    #expect(address == .v4(value))
    #expect(address.description == text)
    #expect(address.family == .ipv4)
}

@Test(arguments: [
    ("", EndpointParseError.Kind.empty),
    ("1.2.3", .invalidIPv4),
    ("1.2.3.4.5", .invalidIPv4),
    ("1..3.4", .invalidIPv4),
    (".1.2.3", .invalidIPv4),
    ("1.2.3.", .invalidIPv4),
    ("256.1.1.1", .invalidIPv4),
    ("1.2.3.1000", .invalidIPv4),
    ("01.2.3.4", .invalidIPv4),
    ("1.2.3.00", .invalidIPv4),
    ("1.2.3.4 ", .notAnIPAddress),
    (" 1.2.3.4", .notAnIPAddress),
    ("+1.2.3.4", .notAnIPAddress),
    ("1.2.3.-4", .notAnIPAddress),
    ("0x1.2.3.4", .notAnIPAddress),
    ("localhost", .notAnIPAddress),
    ("1234", .invalidIPv4),
    ("١.٢.٣.٤", .notAnIPAddress),
])
func ipv4Invalid(text: String, kind: EndpointParseError.Kind) {
    #expect(throws: EndpointParseError.self) { try IPAddress(parsing: text) }
    do {
        _ = try IPAddress(parsing: text)
    } catch {
        #expect(error.kind == kind, "\(error)")
        #expect(error.input == text)
    }
}

@Test func ipv4ErrorMessagesNameInputAndProblem() {
    func message(_ text: String) -> String {
        do {
            _ = try IPAddress(parsing: text)
            return "parsed"
        } catch {
            return error.description
        }
    }
    #expect(
        message("01.2.3.4")
            == #"invalid IP address "01.2.3.4": part 1 "01" has a leading zero (some parsers read that as octal)"#)
    #expect(message("1.2.300.4") == #"invalid IP address "1.2.300.4": part 3 "300" is greater than 255"#)
    #expect(message("1.2..4") == #"invalid IP address "1.2..4": part 3 of the IPv4 address is empty"#)
    #expect(message("1.2.3") == #"invalid IP address "1.2.3": an IPv4 address has 4 parts separated by '.', found 3"#)
}

// MARK: - IPv6

@Test(arguments: [
    // (input, canonical RFC 5952 output)
    ("::", "::"),
    ("::1", "::1"),
    ("0:0:0:0:0:0:0:1", "::1"),
    ("1::", "1::"),
    ("2001:db8::1", "2001:db8::1"),
    ("2001:DB8::1", "2001:db8::1"),
    ("2001:0db8:0000:0000:0000:0000:0000:0001", "2001:db8::1"),
    // RFC 5952 section 4.1: leading zeros suppressed.
    ("2001:0db8::0001", "2001:db8::1"),
    // Section 4.2.1: the longest run is compressed; 4.2.2: a single zero group is not.
    ("2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"),
    ("2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"),
    ("2001:db8::1:1:1:1:1", "2001:db8:0:1:1:1:1:1"),
    // Section 4.2.3: of equal runs, the first is compressed.
    ("2001:0:0:1:0:0:0:1", "2001:0:0:1::1"),
    ("2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"),
    ("1:0:0:2:0:0:3:4", "1::2:0:0:3:4"),
    // Section 4.3: lowercase.
    ("2001:DB8:AAAA:BBBB:CCCC:DDDD:EEEE:FFFF", "2001:db8:aaaa:bbbb:cccc:dddd:eeee:ffff"),
    ("fe80::1", "fe80::1"),
    ("1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8"),
    ("1:2:3:4:5:6:7::", "1:2:3:4:5:6:7:0"),
    ("::2:3:4:5:6:7:8", "0:2:3:4:5:6:7:8"),
    ("1:0:0:0:0:0:0:0", "1::"),
    ("0:0:0:0:0:0:0:0", "::"),
    // Embedded IPv4 (RFC 4291 section 2.2 form 3); only IPv4-mapped prints in mixed notation.
    ("::ffff:1.2.3.4", "::ffff:1.2.3.4"),
    ("::FFFF:192.168.0.1", "::ffff:192.168.0.1"),
    ("0:0:0:0:0:ffff:102:304", "::ffff:1.2.3.4"),
    ("::1.2.3.4", "::102:304"),
    ("64:ff9b::192.0.2.33", "64:ff9b::c000:221"),
    ("1:2:3:4:5:6:1.2.3.4", "1:2:3:4:5:6:102:304"),
])
func ipv6Valid(text: String, canonical: String) throws {
    let address = try IPAddress(parsing: text)
    #expect(address.family == .ipv6)
    #expect(address.description == canonical)
    #expect(try IPAddress(parsing: canonical) == address)
    // glibc agrees on the bits.
    var expected = in6_addr()
    #expect(inet_pton(AF_INET6, text, &expected) == 1)
    #expect(withUnsafeBytes(of: &expected) { Array($0) } == address.addressBytes)
}

@Test(arguments: [
    "", ":", ":::", "::::", "1:::2", "1::2::3", ":1::", "::1:", "1:2:3:4:5:6:7", "1:2:3:4:5:6:7:8:9",
    "1:2:3:4:5:6:7:8::", "::1:2:3:4:5:6:7:8", "1:2:3:4::5:6:7:8", "12345::", "g::", "::1.2.3", "::1.2.3.4.5",
    "::256.1.1.1", "::01.2.3.4", "::1.2.3.4:5", "1.2.3.4::", "1:2:3:4:5:6:7:1.2.3.4", "fe80::1%eth0",
    "[::1]", ":1:2:3:4:5:6:7", "1:2:3:4:5:6:7:", " ::1", "::1 ", "::-1", "::+1",
])
func ipv6Invalid(text: String) {
    #expect(throws: EndpointParseError.self) { try IPAddress(parsing: text) }
    // glibc rejects every one of them too (it has no notion of our stricter IPv4 parts).
    var scratch = in6_addr()
    #expect(inet_pton(AF_INET6, text, &scratch) != 1)
}

@Test func ipv6ErrorMessages() {
    func message(_ text: String) -> String {
        do {
            _ = try IPAddress(parsing: text)
            return "parsed"
        } catch {
            return error.description
        }
    }
    #expect(message("1::2::3") == #"invalid IP address "1::2::3": more than one '::'"#)
    #expect(message("12345::") == #"invalid IP address "12345::": group "12345" has more than 4 hex digits"#)
    #expect(message("1:2:3") == #"invalid IP address "1:2:3": 3 groups of 16 bits; without '::' there must be 8"#)
    #expect(message("fe80::1%eth0").contains("zone identifiers"))
}

/// Random addresses with runs of zero groups, printed by us and by glibc, and read back.
@Test func ipv6MatchesGlibcOnRandomAddresses() throws {
    var random = SeededRandom(seed: 5952)
    for _ in 0..<5000 {
        var value: UInt128 = 0
        for _ in 0..<8 {
            let group: UInt16 =
                random.chance(0.45)
                ? 0 : random.chance(0.5) ? UInt16(random.next() & 0xF) : UInt16(truncatingIfNeeded: random.next())
            value = value << 16 | UInt128(group)
        }
        let address = IPAddress.v6(IPv6Bits(value))
        let ours = address.description
        #expect(try IPAddress(parsing: ours) == address)
        // glibc also prints IPv4-compatible addresses (::/96) in mixed notation, which RFC 5952
        // leaves open; compare only outside that prefix and the mapped one.
        if value >> 32 == 0 || value >> 32 == 0xFFFF { continue }
        var raw = in6_addr()
        withUnsafeMutableBytes(of: &raw) { $0.copyBytes(from: address.addressBytes) }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        #expect(inet_ntop(AF_INET6, &raw, &buffer, socklen_t(buffer.count)) != nil)
        let theirs = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        #expect(ours == theirs)
    }
}

/// Random strings over the IPv6 alphabet: we accept exactly what glibc accepts, and read the same bits.
@Test func ipv6ParserAgreesWithGlibcOnRandomText() {
    var random = SeededRandom(seed: 4291)
    let alphabet = Array("0123456789abcdefABCDEF::::....".utf8)
    var accepted = 0
    for _ in 0..<50_000 {
        let length = Int(random.next() % 24) + 1
        var bytes = (0..<length).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] }
        // Bias towards plausible shapes: mostly short hex groups between colons.
        if random.chance(0.7) {
            bytes = []
            let groups = Int(random.next() % 9) + 1
            for g in 0..<groups {
                if g > 0 { bytes.append(UInt8(ascii: ":")) }
                if random.chance(0.15) { continue }
                let digits = Int(random.next() % 5)
                for _ in 0..<digits { bytes.append(alphabet[Int(random.next() % 22)]) }
            }
            if random.chance(0.2) { bytes += Array(".1.2.3".utf8) }
        }
        let text = String(decoding: bytes, as: UTF8.self)
        var raw = in6_addr()
        let glibc = inet_pton(AF_INET6, text, &raw) == 1
        let ours = try? IPAddress(parsing: text)
        let oursIsV6 = ours?.family == .ipv6
        #expect(glibc == oursIsV6, "\(text): glibc \(glibc), ours \(String(describing: ours))")
        if glibc, let ours {
            accepted += 1
            #expect(withUnsafeBytes(of: &raw) { Array($0) } == ours.addressBytes, "\(text)")
        }
    }
    #expect(accepted > 1000)
}

// MARK: - Endpoint

@Test(arguments: [
    ("1.2.3.4:5", IPAddress.v4(0x0102_0304), UInt16(5)),
    ("0.0.0.0:0", .v4(0), 0),
    ("255.255.255.255:65535", .v4(0xFFFF_FFFF), 65535),
    ("[::1]:5", .v6(1), 5),
    ("[::]:443", .v6(0), 443),
    ("[2001:db8::1]:3478", .v6(IPv6Bits(UInt128(0x2001_0db8_0000_0000_0000_0000_0000_0001))), 3478),
    ("[::ffff:1.2.3.4]:80", .v6(0xFFFF_0102_0304), 80),
])
func endpointValid(text: String, address: IPAddress, port: UInt16) throws {
    let endpoint = try Endpoint(parsing: text)
    #expect(endpoint == Endpoint(address: address, port: port))
    #expect(endpoint.description == text)
    #expect(try Endpoint(parsing: endpoint.description) == endpoint)
}

@Test func endpointPrintsCanonicalIPv6() throws {
    #expect(try Endpoint(parsing: "[2001:DB8:0:0:0:0:0:1]:7").description == "[2001:db8::1]:7")
}

@Test(arguments: [
    ("", EndpointParseError.Kind.empty),
    ("1.2.3.4", .missingPort),
    ("1.2.3.4:", .missingPort),
    ("[::1]", .missingPort),
    ("[::1]:", .missingPort),
    ("::1", .unbracketedIPv6),
    ("::1:5", .unbracketedIPv6),
    ("2001:db8::1:443", .unbracketedIPv6),
    ("example.com:80", .notAnIPAddress),
    ("localhost:5", .notAnIPAddress),
    ("example.com", .notAnIPAddress),
    ("1.2.3.4:5x", .invalidPort),
    ("1.2.3.4:5 ", .invalidPort),
    ("1.2.3.4:+5", .invalidPort),
    ("1.2.3.4:-1", .invalidPort),
    ("1.2.3.4:05", .invalidPort),
    ("1.2.3.4:0x10", .invalidPort),
    ("1.2.3.4:65536", .portOutOfRange),
    ("1.2.3.4:99999999999999999999", .portOutOfRange),
    ("[::1]:65536", .portOutOfRange),
    ("[::1]5", .unexpectedCharacters),
    ("[::1]x:5", .unexpectedCharacters),
    ("[::1:5", .invalidIPv6),
    ("[1.2.3.4]:5", .invalidIPv6),
    ("[fe80::1%eth0]:5", .invalidIPv6),
    ("[::g]:5", .invalidIPv6),
    ("1.2.3:5", .invalidIPv4),
    ("256.0.0.1:5", .invalidIPv4),
    (" 1.2.3.4:5", .notAnIPAddress),
])
func endpointInvalid(text: String, kind: EndpointParseError.Kind) {
    do {
        let endpoint = try Endpoint(parsing: text)
        Issue.record("\(text.debugDescription) parsed as \(endpoint)")
    } catch {
        #expect(error.kind == kind, "\(error)")
        #expect(error.input == text)
        #expect(error.subject == "endpoint")
        #expect(error.description.hasPrefix("invalid endpoint \(text.debugDescription): "))
    }
}

@Test func endpointErrorMessages() {
    func message(_ text: String) -> String {
        do {
            _ = try Endpoint(parsing: text)
            return "parsed"
        } catch {
            return error.description
        }
    }
    #expect(message("1.2.3.4") == #"invalid endpoint "1.2.3.4": missing ":port" after the address"#)
    #expect(
        message("::1:5")
            == #"invalid endpoint "::1:5": an IPv6 address with a port needs brackets, as in "[::1]:443""#)
    #expect(message("1.2.3.4:70000") == #"invalid endpoint "1.2.3.4:70000": port 70000 is greater than 65535"#)
    #expect(message("a.example:1").contains("host names are not resolved"))
    // Control characters in hostile input are escaped, and long input is cut short.
    #expect(message("1.2.3.4:5\n") == #"invalid endpoint "1.2.3.4:5\n": port "5\n" is not a decimal number"#)
    #expect(message(String(repeating: "9", count: 500)).count < 300)
}

// MARK: - Address properties

@Test func addressBytesAndFamily() throws {
    #expect(try IPAddress(parsing: "1.2.3.4").addressBytes == [1, 2, 3, 4])
    let documentation: [UInt8] = [0x20, 0x01, 0x0D, 0xB8] + Array(repeating: 0, count: 11) + [0xFF]
    #expect(try IPAddress(parsing: "2001:db8::ff").addressBytes == documentation)
    #expect(IPAddress(bytes: [1, 2, 3, 4]) == .v4(0x0102_0304))
    #expect(IPAddress(bytes: [UInt8](repeating: 0, count: 15) + [1]) == .loopbackV6)
    #expect(IPAddress(bytes: [1, 2, 3]) == nil)
    let endpoint = try Endpoint(parsing: "[2001:db8::1]:9")
    #expect(endpoint.family == .ipv6)
    #expect(IPAddress(bytes: endpoint.addressBytes) == endpoint.address)
}

@Test func mappedAddresses() throws {
    let mapped = try IPAddress(parsing: "::ffff:10.1.2.3")
    #expect(mapped.unmapped == (try IPAddress(parsing: "10.1.2.3")))
    #expect(try IPAddress(parsing: "10.1.2.3").ipv4Mapped == mapped)
    #expect(IPAddress.loopbackV6.unmapped == .loopbackV6)
    #expect(try Endpoint(parsing: "[::ffff:1.2.3.4]:5").unmapped.description == "1.2.3.4:5")
}

@Test(arguments: [
    // (address, loopback, private, link-local)
    ("127.0.0.1", true, false, false),
    ("127.255.0.9", true, false, false),
    ("128.0.0.1", false, false, false),
    ("10.0.0.0", false, true, false),
    ("10.255.255.255", false, true, false),
    ("11.0.0.0", false, false, false),
    ("172.16.0.1", false, true, false),
    ("172.31.255.255", false, true, false),
    ("172.32.0.0", false, false, false),
    ("172.15.255.255", false, false, false),
    ("192.168.1.1", false, true, false),
    ("192.169.0.0", false, false, false),
    ("169.254.1.1", false, false, true),
    ("169.255.0.0", false, false, false),
    ("8.8.8.8", false, false, false),
    ("::1", true, false, false),
    ("::", false, false, false),
    ("::2", false, false, false),
    ("fc00::1", false, true, false),
    ("fdff:ffff::1", false, true, false),
    ("fe00::1", false, false, false),
    ("fbff::1", false, false, false),
    ("fe80::1", false, false, true),
    ("febf:ffff::1", false, false, true),
    ("fec0::1", false, false, false),
    ("2001:db8::1", false, false, false),
    ("::ffff:127.0.0.1", true, false, false),
    ("::ffff:192.168.0.1", false, true, false),
    ("::ffff:169.254.0.1", false, false, true),
])
func addressClasses(text: String, loopback: Bool, isPrivate: Bool, linkLocal: Bool) throws {
    let address = try IPAddress(parsing: text)
    #expect(address.isLoopback == loopback)
    #expect(address.isPrivate == isPrivate)
    #expect(address.isLinkLocal == linkLocal)
}

@Test func unspecified() throws {
    #expect(IPAddress.anyV4.isUnspecified)
    #expect(IPAddress.anyV6.isUnspecified)
    #expect(try !IPAddress(parsing: "0.0.0.1").isUnspecified)
}

// MARK: - CIDR

@Test(arguments: [
    ("10.0.0.0/8", "10.0.0.0/8"),
    ("0.0.0.0/0", "0.0.0.0/0"),
    ("192.168.1.7/32", "192.168.1.7/32"),
    ("192.168.1.7", "192.168.1.7/32"),
    ("::1/128", "::1/128"),
    ("::/0", "::/0"),
    ("fc00::/7", "fc00::/7"),
    ("2001:DB8::/32", "2001:db8::/32"),
    ("::1", "::1/128"),
])
func cidrValid(text: String, printed: String) throws {
    let block = try CIDR(parsing: text)
    #expect(block.description == printed)
    #expect(try CIDR(parsing: printed) == block)
}

@Test(arguments: [
    ("", EndpointParseError.Kind.empty),
    ("10.0.0.0/", .invalidPrefixLength),
    ("10.0.0.0/33", .invalidPrefixLength),
    ("10.0.0.0/08", .invalidPrefixLength),
    ("10.0.0.0/-1", .invalidPrefixLength),
    ("10.0.0.0/8/8", .invalidPrefixLength),
    ("10.0.0.0/8 ", .invalidPrefixLength),
    ("::/129", .invalidPrefixLength),
    ("10.0.0.1/8", .hostBitsSet),
    ("fc00::1/7", .hostBitsSet),
    ("/8", .empty),
    ("10.0.0/8", .invalidIPv4),
    ("example.com/8", .notAnIPAddress),
])
func cidrInvalid(text: String, kind: EndpointParseError.Kind) {
    do {
        let block = try CIDR(parsing: text)
        Issue.record("\(text.debugDescription) parsed as \(block)")
    } catch {
        #expect(error.kind == kind, "\(error)")
        #expect(error.subject == "CIDR block")
    }
}

@Test func cidrHostBitsMessageSuggestsNetwork() {
    #expect(throws: EndpointParseError(
        kind: .hostBitsSet, input: "10.0.0.1/8", subject: "CIDR block",
        detail: #"the address has bits set beyond the /8 prefix; did you mean "10.0.0.0/8"?"#)) {
        try CIDR(parsing: "10.0.0.1/8")
    }
}

@Test func cidrContains() throws {
    let ten = try CIDR(parsing: "10.0.0.0/8")
    #expect(ten.contains(try IPAddress(parsing: "10.0.0.0")))
    #expect(ten.contains(try IPAddress(parsing: "10.255.255.255")))
    #expect(!ten.contains(try IPAddress(parsing: "11.0.0.0")))
    #expect(!ten.contains(try IPAddress(parsing: "9.255.255.255")))
    #expect(ten.contains(try IPAddress(parsing: "::ffff:10.1.2.3")))
    #expect(!ten.contains(try IPAddress(parsing: "::ffff:11.1.2.3")))
    #expect(!ten.contains(try IPAddress(parsing: "::a01:203")))

    let all4 = try CIDR(parsing: "0.0.0.0/0")
    #expect(all4.contains(try IPAddress(parsing: "255.1.2.3")))
    #expect(!all4.contains(.loopbackV6))

    let ula = try CIDR(parsing: "fc00::/7")
    #expect(ula.contains(try IPAddress(parsing: "fd12:3456::1")))
    #expect(!ula.contains(try IPAddress(parsing: "fe00::1")))
    #expect(!ula.contains(.loopbackV4))

    let loop = try CIDR(parsing: "::1/128")
    #expect(loop.contains(.loopbackV6))
    #expect(!loop.contains(try IPAddress(parsing: "::2")))

    let mapped = try CIDR(parsing: "::ffff:0:0/96")
    #expect(mapped.contains(try IPAddress(parsing: "8.8.8.8")))
    #expect(try CIDR(parsing: "::/0").contains(try IPAddress(parsing: "8.8.8.8")))
    #expect(!(try CIDR(parsing: "::/96")).contains(try IPAddress(parsing: "8.8.8.8")))
    #expect(try CIDR(parsing: "1.2.3.4/32").contains(try IPAddress(parsing: "1.2.3.4")))
}

@Test func cidrMemberwiseMasks() {
    #expect(CIDR(address: .v4(0x0A01_0203), prefixLength: 8)?.description == "10.0.0.0/8")
    #expect(CIDR(address: .v4(0), prefixLength: 33) == nil)
    #expect(CIDR(address: .v6(1), prefixLength: -1) == nil)
    #expect(CIDR(address: .v6(IPv6Bits(UInt128.max)), prefixLength: 128)?.network == .v6(IPv6Bits(UInt128.max)))
}

// MARK: - Printing as bytes

@Test(arguments: ["0.0.0.0:0", "1.2.3.4:5", "10.0.0.1:9", "198.51.100.10:50000", "255.255.255.255:65535",
                  "9.99.100.255:10", "[::1]:3478", "[2001:db8::1]:100", "[::ffff:1.2.3.4]:443"])
func endpointDescriptionAppendedAsBytes(text: String) throws {
    let endpoint = try Endpoint(parsing: text)
    var bytes: [UInt8] = [UInt8(ascii: "|")]
    endpoint.appendDescription(to: &bytes)
    #expect(bytes == [UInt8(ascii: "|")] + Array(endpoint.description.utf8))
    #expect(endpoint.description == text)
}

/// `Endpoint.description` is written digit by digit for IPv4: it must print what interpolating the
/// address and the port prints, for every octet width and port width.
@Test func ipv4EndpointDescriptionMatchesInterpolation() {
    var random = SeededRandom(seed: 7)
    let ports: [UInt16] = [0, 1, 9, 10, 99, 100, 999, 1000, 9999, 10000, 65535]
    for i in 0..<2000 {
        let address = IPAddress.v4(UInt32(truncatingIfNeeded: random.next()))
        let port = i < ports.count ? ports[i] : UInt16(truncatingIfNeeded: random.next())
        let endpoint = Endpoint(address: address, port: port)
        #expect(endpoint.description == "\(address):\(port)")
    }
}
