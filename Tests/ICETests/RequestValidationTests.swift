// Answering Binding requests (RFC 8445 §7.3, RFC 8489 §9.1.3): 400 without USERNAME or
// MESSAGE-INTEGRITY, 401 for an unknown ufrag or a wrong password, and no state either way;
// a valid request gets XOR-MAPPED-ADDRESS and creates a peer-reflexive candidate and a triggered check.

import STUN
import Testing
import ZoneCore
@testable import ICE

@Suite struct RequestValidationTests {
    let peer = try! Endpoint(parsing: "192.0.2.77:7777")

    func agent() -> ICEAgent {
        var agent = try! ICEAgent(
            configuration: AgentConfiguration(hostAddresses: [Harness.hostA], role: .controlled,
                                              credentials: Harness.credentialsA, seed: 7),
            now: .seconds(10))
        try! agent.setRemoteCredentials(Harness.credentialsB)
        while agent.pollOutput() != nil {}
        return agent
    }

    func request(username: String?, password: String?, attributes: [STUNAttribute] = [.iceControlling(tieBreaker: 1)])
        -> [UInt8] {
        var attrs: [STUNAttribute] = username.map { [.username($0)] } ?? []
        attrs += [.priority(1_862_270_975)] + attributes
        let message = STUNMessage(method: .binding, messageClass: .request,
                                  transactionID: STUNTransactionID(high: 7, low: 7), attributes: attrs)
        let key = password.map { try! STUNIntegrityKey.shortTerm(password: $0) }
        return try! message.encode(key: key, fingerprint: true)
    }

    /// Feeds `bytes` and returns the single response the agent sent.
    func answer(_ agent: inout ICEAgent, _ bytes: [UInt8]) throws -> (STUNMessage, [UInt8]) {
        agent.handle(.datagram(bytes, from: peer, to: Harness.hostA), now: .seconds(11))
        var responses: [[UInt8]] = []
        while let output = agent.pollOutput() {
            if case .transmit(let b, let from, let to) = output {
                #expect(from == Harness.hostA && to == peer)
                responses.append(b)
            }
        }
        try #require(responses.count == 1)
        return (try STUNMessage(decoding: responses[0]), responses[0])
    }

    @Test(arguments: [
        ("wrong password", "AAAA:BBBB", "not-the-password-at-all!", 401),
        ("unknown ufrag", "ZZZZ:BBBB", "aaaaaaaaaaaaaaaaaaaaaaaa", 401),
        ("no colon", "AAAABBBB", "aaaaaaaaaaaaaaaaaaaaaaaa", 401),
    ])
    func badCredentialsGet401AndNoState(_ name: String, _ username: String, _ password: String, _ code: Int) throws {
        var a = agent()
        let (response, _) = try answer(&a, request(username: username, password: password))
        #expect(response.messageClass == .errorResponse && response.errorCode?.code == code, "\(name)")
        #expect(!response.contains(.messageIntegrity))
        #expect(a.remoteCandidates.isEmpty && a.pairs.isEmpty && a.state == .new)
        #expect(a.nextDeadline == nil)
    }

    @Test func missingUsernameOrIntegrityGets400() throws {
        var a = agent()
        let (noUsername, _) = try answer(&a, request(username: nil, password: "aaaaaaaaaaaaaaaaaaaaaaaa"))
        #expect(noUsername.errorCode?.code == 400)
        let (noIntegrity, _) = try answer(&a, request(username: "AAAA:BBBB", password: nil))
        #expect(noIntegrity.errorCode?.code == 400)
        #expect(a.remoteCandidates.isEmpty && a.pairs.isEmpty)
    }

    @Test func missingRoleAttributeGets400() throws {
        var a = agent()
        let (response, _) = try answer(&a, request(username: "AAAA:BBBB", password: "aaaaaaaaaaaaaaaaaaaaaaaa",
                                                   attributes: []))
        #expect(response.errorCode?.code == 400)
        #expect(a.pairs.isEmpty)
    }

    @Test func validRequestIsAnsweredAndLearnsPeerReflexive() throws {
        var a = agent()
        let (response, bytes) = try answer(&a, request(username: "AAAA:BBBB", password: "aaaaaaaaaaaaaaaaaaaaaaaa"))
        #expect(response.messageClass == .successResponse)
        #expect(response.xorMappedAddress == peer)
        #expect(try STUNIntegrity.verify(bytes, key: STUNIntegrityKey.shortTerm(password: "aaaaaaaaaaaaaaaaaaaaaaaa"))
            == .hmacSHA1)
        #expect(STUNIntegrity.hasValidFingerprint(bytes))
        let prflx = try #require(a.remoteCandidates.first)
        #expect(prflx.kind == .peerReflexive && prflx.address == peer && prflx.priority == 1_862_270_975)
        #expect(a.pairs.count == 1 && a.pairs[0].state == .waiting)
        // The triggered check goes out on the next pacing tick, signed with the peer's password.
        a.handle(.timer, now: .seconds(11))
        var checks: [[UInt8]] = []
        while let output = a.pollOutput() {
            if case .transmit(let b, _, let to) = output, to == peer { checks.append(b) }
        }
        let check = try STUNMessage(decoding: try #require(checks.first))
        #expect(check.username == "BBBB:AAAA" && check.iceControlled != nil && !check.useCandidate)
        let peerKey = try STUNIntegrityKey.shortTerm(password: Harness.credentialsB.password)
        #expect(try STUNIntegrity.verify(checks[0], key: peerKey) == .hmacSHA1)
    }

    @Test func roleConflictIsAnswered487WhenWeKeepTheRole() throws {
        var a = try ICEAgent(
            configuration: AgentConfiguration(hostAddresses: [Harness.hostA], role: .controlling,
                                              credentials: Harness.credentialsA, seed: 7, tieBreaker: 100),
            now: .seconds(10))
        while a.pollOutput() != nil {}
        let (response, _) = try answer(&a, request(username: "AAAA:BBBB", password: "aaaaaaaaaaaaaaaaaaaaaaaa",
                                                   attributes: [.iceControlling(tieBreaker: 50)]))
        #expect(response.errorCode?.code == 487 && response.contains(.messageIntegrity))
        #expect(a.role == .controlling && a.pairs.isEmpty)
        let (ok, _) = try answer(&a, request(username: "AAAA:BBBB", password: "aaaaaaaaaaaaaaaaaaaaaaaa",
                                             attributes: [.iceControlling(tieBreaker: 500)]))
        #expect(ok.messageClass == .successResponse && a.role == .controlled)
    }

    @Test func nonSTUNDatagramsAreApplicationDataOnlyFromKnownCandidates() throws {
        var a = agent()
        // From an address no check or signal named: dropped (it could be anyone).
        a.handle(.datagram([0x80, 0x60, 1, 2], from: peer, to: Harness.hostA), now: .seconds(11))
        #expect(a.pollOutput() == nil && a.droppedDatagrams == 1)
        // Once the peer's check made it a (peer-reflexive) remote candidate, its data is accepted…
        _ = try answer(&a, request(username: "AAAA:BBBB", password: "aaaaaaaaaaaaaaaaaaaaaaaa"))
        a.handle(.datagram([0x80, 0x60, 1, 2], from: peer, to: Harness.hostA), now: .seconds(11))
        #expect(a.pollOutput() == .event(.data([0x80, 0x60, 1, 2], from: peer)))
        // …but not on an address that is none of our bases, nor from a neighbouring port.
        let stranger = Endpoint(address: peer.address, port: peer.port + 1)
        a.handle(.datagram([0x80, 0x60, 1, 2], from: stranger, to: Harness.hostA), now: .seconds(11))
        a.handle(.datagram([0x80, 0x60, 1, 2], from: peer, to: Harness.hostB), now: .seconds(11))
        #expect(a.pollOutput() == nil && a.droppedDatagrams == 3)
    }

    @Test func requestsToAnAddressThatIsNoBaseAreNotAnswered() {
        var a = agent()
        let bytes = request(username: "AAAA:BBBB", password: "aaaaaaaaaaaaaaaaaaaaaaaa")
        a.handle(.datagram(bytes, from: peer, to: Harness.hostB), now: .seconds(11))
        #expect(a.pollOutput() == nil && a.remoteCandidates.isEmpty)
    }

    /// What looks like STUN and does not decode, or is not Binding, is dropped and counted.
    @Test func malformedSTUNIsCounted() {
        var a = agent()
        var bytes = request(username: "AAAA:BBBB", password: "aaaaaaaaaaaaaaaaaaaaaaaa")
        bytes[3] &+= 8  // the header's length now overruns the message
        a.handle(.datagram(bytes, from: peer, to: Harness.hostA), now: .seconds(11))
        let allocate = STUNMessage(method: .allocate, messageClass: .request,
                                   transactionID: STUNTransactionID(high: 1, low: 1))
        a.handle(.datagram(try! allocate.encode(), from: peer, to: Harness.hostA), now: .seconds(11))
        #expect(a.pollOutput() == nil)
        #expect(a.malformedMessages == 2)
    }

    /// A check that cannot be encoded (the peer's ufrag makes a USERNAME longer than STUN allows,
    /// RFC 8489 §14.3) is not sent: the pair fails and the agent counts it.
    @Test func unencodableChecksAreCounted() throws {
        var a = try ICEAgent(
            configuration: AgentConfiguration(hostAddresses: [Harness.hostA], role: .controlling,
                                              credentials: Harness.credentialsA, seed: 7),
            now: .seconds(10))
        try a.setRemoteCredentials(Credentials(ufrag: String(repeating: "u", count: 600),
                                               password: "bbbbbbbbbbbbbbbbbbbbbbbb"))
        a.addRemoteCandidate(Candidate.remote(kind: .host, address: peer, priority: 1, foundation: "1"))
        a.handle(.timer, now: .seconds(11))
        var checks = 0
        while let output = a.pollOutput() { if case .transmit = output { checks += 1 } }
        #expect(checks == 0)
        #expect(a.unencodableMessages == 1)
        #expect(a.pairs.allSatisfy { $0.state == .failed })
    }
}
