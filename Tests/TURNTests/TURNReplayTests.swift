import STUN
import Testing
@testable import TURN
import ZoneCore

/// Issue 13, item 4: a TURN request captured on the wire and replayed byte for byte from another
/// 5-tuple is challenged (438 Stale Nonce with a fresh nonce), as coturn does, and gets nothing.
@Suite("TURN replayed requests")
struct TURNReplayTests {
    let peer = try! Endpoint(parsing: "127.0.0.1:5000")

    /// Our client allocates and asks for a permission; returns the loop and the two signed requests
    /// that succeeded, as they went on the wire.
    func captured() -> (TURNLoop, allocate: [UInt8], permission: [UInt8]) {
        var configuration = TURNLoop.serverConfiguration()
        configuration.maxAllocationsPerUser = 2
        let loop = TURNLoop(server: configuration)
        loop.addClient()
        #expect(loop.run(for: .seconds(5)) { $0.clients[0].phase == .allocated })
        loop.clients[0].createPermission(for: peer, now: loop.now)
        #expect(loop.run(for: .seconds(5)) { $0.clients[0].hasPermission(for: self.peer) })
        func signed(_ method: STUNMethod) -> [UInt8] {
            loop.sent.last {
                guard let m = try? STUNMessage(decoding: $0.bytes) else { return false }
                return m.method == method && m.contains(.messageIntegrity)
            }!.bytes
        }
        return (loop, signed(.allocate), signed(.createPermission))
    }

    func answer(_ actions: [TURNServer.Action]) -> STUNMessage? {
        for case .toClient(let bytes, _, _) in actions { return try? STUNMessage(decoding: bytes) }
        return nil
    }

    @Test("Allocate and CreatePermission replayed from another source port: 438, no allocation, no quota used")
    func replayFromAnotherPort() throws {
        let (loop, allocate, permission) = captured()
        let before = loop.server.counters
        #expect(loop.server.activeAllocations == 1)
        let thief = try Endpoint(parsing: "127.0.0.1:41999")
        let capturedNonce = try STUNMessage(decoding: allocate).nonce
        for _ in 0..<3 {
            for request in [allocate, permission] {
                let actions = loop.server.outputs(after: .clientDatagram(request, from: thief, to: loop.serverAddress),
                                                  now: loop.now)
                let reply = try #require(answer(actions))
                #expect(reply.messageClass == .errorResponse && reply.errorCode?.code == 438)
                #expect(reply.nonce != nil && reply.nonce != capturedNonce)
                #expect(!actions.contains { if case .openRelay = $0 { true } else { false } })
            }
        }
        #expect(loop.server.activeAllocations == 1)
        #expect(loop.server.counters.allocations == before.allocations)
        #expect(loop.server.counters.challenges == before.challenges + 6)
        // The quota (2) is untouched: alice's second client still allocates.
        loop.addClient()
        #expect(loop.run(for: .seconds(5)) { $0.clients[1].phase == .allocated })
        #expect(loop.server.activeAllocations == 2)
    }

    @Test("the same bytes sent to another listening address of the server, or after the nonce expired: 438")
    func replayToAnotherSocketOrLate() throws {
        let (loop, allocate, _) = captured()
        let client = loop.clientAddresses[0]
        let otherListener = try Endpoint(parsing: "127.0.0.2:3478")
        let elsewhere = answer(loop.server.outputs(after: .clientDatagram(allocate, from: client, to: otherListener),
                                                   now: loop.now))
        #expect(elsewhere?.errorCode?.code == 438)
        // From the very 5-tuple it was minted for, the nonce is good until it expires (600 s here).
        let late = loop.now + loop.server.configuration.nonceLifetime + .seconds(1)
        let expired = answer(loop.server.outputs(after: .clientDatagram(allocate, from: client, to: loop.serverAddress),
                                                 now: late))
        #expect(expired?.errorCode?.code == 438)
        #expect(loop.server.activeAllocations == 1)
    }

    @Test("a nonce is good from the 5-tuple it was given to, until its lifetime ends")
    func nonceBinding() throws {
        let server = TURNServer(configuration: TURNLoop.serverConfiguration(), seed: 1)
        let a = FiveTuple(client: try Endpoint(parsing: "127.0.0.1:40000"),
                          server: try Endpoint(parsing: "127.0.0.1:3478"))
        let b = FiveTuple(client: try Endpoint(parsing: "127.0.0.1:40001"), server: a.server)
        let c = FiveTuple(client: a.client, server: try Endpoint(parsing: "[::1]:3478"))
        let t0 = Instant.seconds(1_800_000_000)
        let nonce = server.mintNonce(for: a, now: t0)
        #expect(server.nonceIsFresh(nonce, for: a, now: t0 + .seconds(599)))
        #expect(!server.nonceIsFresh(nonce, for: a, now: t0 + .seconds(601)))
        #expect(!server.nonceIsFresh(nonce, for: b, now: t0))
        #expect(!server.nonceIsFresh(nonce, for: c, now: t0))
        let signature = nonce.split(separator: "-")[1]
        #expect(signature.count == 16 && signature.utf8.allSatisfy { Array("0123456789abcdef".utf8).contains($0) })
        for forged in ["", "-", "ffffffffffffffffff-00", "zz-zz", nonce + "0", "0-" + signature, String(nonce.dropLast()),
                       nonce.uppercased()] where forged != nonce {
            #expect(!server.nonceIsFresh(forged, for: a, now: t0), "\(forged)")
        }
    }

    @Test("on an allocation, a nonce it already verified is still checked for expiry, and any other nonce in full")
    func allocationRemembersItsNonce() throws {
        let (loop, _, permission) = captured()
        let client = loop.clientAddresses[0]
        let request = try STUNMessage(decoding: permission)
        let nonce = try #require(request.nonce)
        // The nonce the allocation verified, in the very bytes that succeeded: accepted again…
        let again = answer(loop.server.outputs(after: .clientDatagram(permission, from: client, to: loop.serverAddress),
                                               now: loop.now))
        #expect(again?.messageClass == .successResponse)
        // …until it expires.
        let late = loop.now + loop.server.configuration.nonceLifetime + .seconds(1)
        let expired = answer(loop.server.outputs(after: .clientDatagram(permission, from: client, to: loop.serverAddress),
                                                 now: late))
        #expect(expired?.errorCode?.code == 438)
        // A nonce of the right form that this server never minted, correctly signed with alice's key: 438.
        let key = try STUNIntegrityKey.longTerm(username: "alice", realm: "zone", password: "secret")
        let stamp = try #require(nonce.split(separator: "-").first)
        for forged in [stamp + "-0123456789abcdef", nonce.dropLast() + (nonce.hasSuffix("0") ? "1" : "0")] {
            var m = request
            m.transactionID = STUNTransactionID(high: 7, low: 7)
            m.attributes = m.attributes.filter {
                switch $0 {
                case .nonce, .messageIntegrity, .fingerprint: false
                default: true
                }
            } + [.nonce(String(forged))]
            let bytes = try m.encode(key: key, fingerprint: true)
            let reply = answer(loop.server.outputs(after: .clientDatagram(bytes, from: client, to: loop.serverAddress),
                                                   now: loop.now))
            #expect(reply?.errorCode?.code == 438, "\(forged)")
        }
        #expect(loop.server.activeAllocations == 1)
    }
}
