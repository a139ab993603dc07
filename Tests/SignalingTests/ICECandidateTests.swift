import Testing
import ZoneCore

@testable import SDP
@testable import Signaling

// MARK: - Real-world lines

@Test(arguments: Fixtures.candidates.map(\.text))
func candidateFromRealStacksRoundTrips(text: String) throws {
    let candidate = try ICECandidate(parsing: text)
    let printed = candidate.description
    #expect(try ICECandidate(parsing: printed) == candidate)
    #expect(try ICECandidate(parsing: candidate.attributeLine) == candidate)
    // Chrome's and aiortc's lines are already canonical; Firefox's differ only in the case of
    // the transport.
    let bare = text.hasPrefix("a=") ? String(text.dropFirst(2)) : text
    #expect(
        printed
            == bare.replacingOccurrences(of: " UDP ", with: " udp ").replacingOccurrences(of: " TCP ", with: " tcp "))
}

@Test func chromeMDNSHostCandidate() throws {
    let candidate = try ICECandidate(parsing: Fixtures.candidates[0].text)
    #expect(candidate.foundation == "2999745851")
    #expect(candidate.component == 1)
    #expect(candidate.transport == .udp)
    #expect(candidate.priority == 2_122_260_223)
    #expect(candidate.address == .hostname("57b6fb7e-bfea-4155-9a28-f7b324e4e25a.local"))
    #expect(candidate.address.isMDNS)
    #expect(candidate.address.ipAddress == nil)
    #expect(candidate.port == 54321)
    #expect(candidate.type == .host)
    #expect(candidate.relatedAddress == nil && candidate.relatedPort == nil)
    #expect(candidate.generation == 0)
    #expect(candidate.usernameFragment == "dMlH")
    #expect(candidate.networkID == 1)
    #expect(candidate.networkCost == 10)
    #expect(candidate.extensions.isEmpty)
}

@Test func chromeServerReflexiveWithHiddenBase() throws {
    let candidate = try ICECandidate(parsing: Fixtures.candidates[1].text)
    #expect(candidate.type == .serverReflexive)
    #expect(candidate.address == .ip(try IPAddress(parsing: "203.0.113.45")))
    #expect(candidate.relatedAddress == .ip(.anyV4))
    #expect(candidate.relatedPort == 0)
}

@Test func chromeTCPAndRelayAndIPv6() throws {
    let tcp = try ICECandidate(parsing: Fixtures.candidates[2].text)
    #expect(tcp.transport == .tcp && tcp.tcpType == .active && tcp.port == 9)
    #expect(tcp.networkCost == nil)
    let relay = try ICECandidate(parsing: Fixtures.candidates[3].text)
    #expect(relay.type == .relay)
    #expect(relay.relatedAddress == .ip(try IPAddress(parsing: "203.0.113.45")) && relay.relatedPort == 54321)
    let v6 = try ICECandidate(parsing: Fixtures.candidates[4].text)
    #expect(v6.address == .ip(try IPAddress(parsing: "2001:db8:85a3::8a2e:370:7334")))
    #expect(v6.address.ipAddress?.family == .ipv6)
    let rtcp = try ICECandidate(parsing: Fixtures.candidates[5].text)
    #expect(rtcp.component == 2 && rtcp.networkID == nil && rtcp.networkCost == 999)
}

@Test func firefoxUpperCaseTransport() throws {
    let host = try ICECandidate(
        parsing: "candidate:0 1 UDP 2122252543 873be078-f3b7-450d-b373-ca533488f876.local 61874 typ host")
    #expect(host.transport == .udp && host.foundation == "0" && host.address.isMDNS)
    #expect(
        host.description == "candidate:0 1 udp 2122252543 873be078-f3b7-450d-b373-ca533488f876.local 61874 typ host")
    let tcp = try ICECandidate(parsing: "candidate:2 1 TCP 2105524479 192.168.1.23 9 typ host tcptype active")
    #expect(tcp.transport == .tcp && tcp.tcpType == .active)
}

@Test func aiortcHexFoundationAndIPv6() throws {
    let candidate = try ICECandidate(parsing: Fixtures.candidates[12].text)
    #expect(candidate.foundation == "26934b484e73cf575dcad6ba2b0aee0c")
    #expect(candidate.foundation.count == 32)
    #expect(candidate.address.description == "2001:db8:4860:1:2e0:4cff:fe68:1b5")
    let passive = try ICECandidate(parsing: Fixtures.candidates[14].text)
    #expect(passive.tcpType == .passive)
}

@Test func keywordsAreCaseInsensitiveAndSpacingForgiven() throws {
    let candidate = try ICECandidate(
        parsing: "  CANDIDATE:1 1 Udp 100 10.0.0.1 5000 TYP SRFLX RADDR 10.0.0.2 RPORT 6000 TCPTYPE SO\r\n")
    #expect(candidate.type == .serverReflexive)
    #expect(candidate.relatedAddress == .ip(try IPAddress(parsing: "10.0.0.2")))
    #expect(candidate.relatedPort == 6000)
    #expect(candidate.tcpType == .simultaneousOpen)
    #expect(
        candidate.description == "candidate:1 1 udp 100 10.0.0.1 5000 typ srflx raddr 10.0.0.2 rport 6000 tcptype so")
}

@Test func unknownExtensionsKeptInOrderAndPrintedAfterKnownOnes() throws {
    let text = "candidate:1 1 udp 100 10.0.0.1 5000 typ host zeta 9 generation 0 alpha x/y network-id 3 ufrag abcd"
    let candidate = try ICECandidate(parsing: text)
    #expect(candidate.extensions == [.init(name: "zeta", value: "9"), .init(name: "alpha", value: "x/y")])
    #expect(candidate.generation == 0 && candidate.networkID == 3 && candidate.usernameFragment == "abcd")
    #expect(
        candidate.description
            == "candidate:1 1 udp 100 10.0.0.1 5000 typ host generation 0 ufrag abcd network-id 3 zeta 9 alpha x/y")
    #expect(try ICECandidate(parsing: candidate.description) == candidate)
}

@Test func builtCandidatePrintsCanonically() throws {
    let candidate = ICECandidate(
        foundation: "4", priority: ICECandidate.priority(typePreference: 100, localPreference: 65_535, component: 1),
        address: .ip(try IPAddress(parsing: "203.0.113.5")), port: 40_000, type: .serverReflexive,
        relatedAddress: .ip(try IPAddress(parsing: "10.0.0.5")), relatedPort: 40_000, generation: 0,
        usernameFragment: "Zq9+", extensions: [.init(name: "x-test", value: "1")])
    #expect(candidate.priority == 1_694_498_815)
    #expect(
        candidate.attributeLine
            == "a=candidate:4 1 udp 1694498815 203.0.113.5 40000 typ srflx raddr 10.0.0.5 rport 40000 generation 0 "
            + "ufrag Zq9+ x-test 1"
    )
    #expect(try ICECandidate(parsing: candidate.attributeLine) == candidate)
}

@Test func priorityFormula() {
    // RFC 8445 §5.1.2.1 with the recommended type preferences.
    #expect(ICECandidate.priority(typePreference: 126, localPreference: 65_535, component: 1) == 2_130_706_431)
    #expect(ICECandidate.priority(typePreference: 0, localPreference: 0, component: 256) == 0)
    #expect(ICECandidate.priority(typePreference: 500, localPreference: 1 << 20, component: 0) == 2_130_706_431)
}

@Test func fullyQualifiedMDNSNameAndPlainHostname() throws {
    let dotted = try ICECandidate(parsing: "candidate:1 1 udp 1 abc.local. 9 typ host")
    #expect(dotted.address.isMDNS)
    let named = try ICECandidate(parsing: "candidate:1 1 udp 1 turn.example.com 3478 typ relay")
    #expect(named.address == .hostname("turn.example.com") && !named.address.isMDNS)
}

// MARK: - Errors, one per path

private func candidateError(_ text: String) -> CandidateParseError? {
    do {
        _ = try ICECandidate(parsing: text)
        return nil
    } catch {
        return error
    }
}

private let base = "candidate:1 1 udp 100 10.0.0.1 5000 typ host"

@Test(
    arguments: [
        // (input, kind, field, token)
        ("1 1 udp 100 10.0.0.1 5000 typ host", CandidateParseError.Kind.missingPrefix, nil, nil),
        ("a=candidat:1 1 udp 100 10.0.0.1 5000 typ host", .missingPrefix, nil, nil),
        ("candidate:", .missingField, .foundation, nil),
        ("candidate:1", .missingField, .component, nil),
        ("candidate:1 1", .missingField, .transport, nil),
        ("candidate:1 1 udp", .missingField, .priority, nil),
        ("candidate:1 1 udp 100", .missingField, .connectionAddress, nil),
        ("candidate:1 1 udp 100 10.0.0.1", .missingField, .port, nil),
        ("candidate:1 1 udp 100 10.0.0.1 5000", .missingField, .typKeyword, nil),
        ("candidate:1 1 udp 100 10.0.0.1 5000 typ", .missingField, .candidateType, nil),
    ] as [(String, CandidateParseError.Kind, CandidateParseError.Field?, String?)])
func candidateStructureErrors(
    text: String, kind: CandidateParseError.Kind, field: CandidateParseError.Field?, token: String?
) throws {
    let error = try #require(candidateError(text))
    #expect(error.kind == kind)
    #expect(error.field == field)
    #expect(error.token == token)
    #expect(error.input == text)
}

@Test(
    arguments: [
        // (input, field, offending token)
        ("candidate:abc_def 1 udp 100 10.0.0.1 5000 typ host", CandidateParseError.Field.foundation, "abc_def"),
        (
            "candidate:\(String(repeating: "a", count: 33)) 1 udp 100 10.0.0.1 5000 typ host", .foundation,
            String(repeating: "a", count: 33)
        ),
        ("candidate:1 0 udp 100 10.0.0.1 5000 typ host", .component, "0"),
        ("candidate:1 257 udp 100 10.0.0.1 5000 typ host", .component, "257"),
        ("candidate:1 0001 udp 100 10.0.0.1 5000 typ host", .component, "0001"),
        ("candidate:1 x udp 100 10.0.0.1 5000 typ host", .component, "x"),
        ("candidate:1 1 sctp 100 10.0.0.1 5000 typ host", .transport, "sctp"),
        ("candidate:1 1 udp 4294967296 10.0.0.1 5000 typ host", .priority, "4294967296"),
        ("candidate:1 1 udp -5 10.0.0.1 5000 typ host", .priority, "-5"),
        ("candidate:1 1 udp 100 10.0.0.256 5000 typ host", .connectionAddress, "10.0.0.256"),
        ("candidate:1 1 udp 100 2001:db8::g 5000 typ host", .connectionAddress, "2001:db8::g"),
        ("candidate:1 1 udp 100 fe80::1%en0 5000 typ host", .connectionAddress, "fe80::1%en0"),
        ("candidate:1 1 udp 100 bad_host.local 5000 typ host", .connectionAddress, "bad_host.local"),
        ("candidate:1 1 udp 100 -x.local 5000 typ host", .connectionAddress, "-x.local"),
        ("candidate:1 1 udp 100 a..local 5000 typ host", .connectionAddress, "a..local"),
        ("candidate:1 1 udp 100 10.0.0.1 65536 typ host", .port, "65536"),
        ("candidate:1 1 udp 100 10.0.0.1 +5 typ host", .port, "+5"),
        ("candidate:1 1 udp 100 10.0.0.1 5000 type host", .typKeyword, "type"),
        ("candidate:1 1 udp 100 10.0.0.1 5000 typ relayed", .candidateType, "relayed"),
        ("\(base) raddr 300.1.1.1 rport 1", .relatedAddress, "300.1.1.1"),
        ("\(base) raddr 10.0.0.2 rport x", .relatedPort, "x"),
        ("\(base) tcptype both", .tcpType, "both"),
        ("\(base) generation -1", .generation, "-1"),
        ("\(base) ufrag ab!c", .usernameFragment, "ab!c"),
        ("\(base) network-id 1.5", .networkID, "1.5"),
        ("\(base) network-cost 99999999999", .networkCost, "99999999999"),
        ("\(base) na:me 1", .extension, "na:me"),
        ("\(base) name va\u{7F}lue", .extension, "va\u{7F}lue"),
    ] as [(String, CandidateParseError.Field, String)])
func candidateInvalidField(text: String, field: CandidateParseError.Field, token: String) throws {
    let error = try #require(candidateError(text))
    #expect(error.kind == .invalidField)
    #expect(error.field == field)
    #expect(error.token == token)
    // The message names the field and quotes the token.
    #expect(error.description.contains("\(field) \(token.debugDescription)"), "\(error)")
}

@Test func candidateExtensionWithoutValue() throws {
    let error = try #require(candidateError("\(base) generation 0 ufrag"))
    #expect(error.kind == .missingExtensionValue)
    #expect(error.field == .usernameFragment && error.token == "ufrag")
    let unknown = try #require(candidateError("\(base) lonely"))
    #expect(unknown.kind == .missingExtensionValue && unknown.field == .extension && unknown.token == "lonely")
}

@Test(arguments: [
    ("\(base) generation 0 generation 1", CandidateParseError.Field.generation),
    ("\(base) raddr 1.1.1.1 RADDR 2.2.2.2", .relatedAddress),
    ("\(base) rport 1 rport 2", .relatedPort),
    ("\(base) tcptype active tcptype passive", .tcpType),
    ("\(base) ufrag abcd ufrag efgh", .usernameFragment),
    ("\(base) network-id 1 network-id 2", .networkID),
    ("\(base) network-cost 1 network-cost 2", .networkCost),
])
func candidateDuplicateExtension(text: String, field: CandidateParseError.Field) throws {
    let error = try #require(candidateError(text))
    #expect(error.kind == .duplicateExtension)
    #expect(error.field == field)
}

@Test func candidateErrorMessageIsOneReadableLine() throws {
    let error = try #require(candidateError("candidate:1 1 udp 100 10.0.0.1 70000 typ host"))
    #expect(
        error.description
            == #"invalid ICE candidate "candidate:1 1 udp 100 10.0.0.1 70000 typ host": port "70000" must be a port "#
            + #"number from 0 to 65535"#
    )
    let missing = try #require(candidateError("candidate:1 1 udp 100 10.0.0.1"))
    #expect(missing.description.hasSuffix("port missing: the candidate ends after the connection address"))
}
