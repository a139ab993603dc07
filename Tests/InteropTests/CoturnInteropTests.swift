// Our STUN and TURN client against coturn's turnserver on loopback (docs/INTEROP.md): a real
// server nobody here wrote must accept what we send, and we must understand what it answers.

import Foundation
import TestSupport
import Net
import STUN
import Testing
import TURN
import ZoneCore

@Suite("coturn interop", .serialized)
struct CoturnInteropTests {
    /// True when the coturn programs are here; otherwise a failure under ZONERTC_CI=1, a skip message elsewhere.
    static func coturnAvailable() -> Bool {
        let missing = ["turnserver", "turnutils_peer"].filter { ExternalProgram.path($0) == nil }
        guard !missing.isEmpty else { return true }
        let message = "\(missing.joined(separator: ", ")) not found (Debian package coturn)"
        if ExternalProgram.underCI {
            Issue.record("\(message), and ZONERTC_CI=1 says it must be installed")
        } else {
            print("skipped: \(message); `apt-get install coturn` to run this test")
        }
        return false
    }

    struct BindingReport: Sendable {
        var local: Endpoint
        var mapped: Endpoint?
        var plainMapped: Endpoint?
        var software: String?
    }

    @Test("our Binding request: turnserver answers with our address in XOR-MAPPED-ADDRESS")
    func binding() async throws {
        guard Self.coturnAvailable() else { return }
        let report = try await offPool { () throws -> BindingReport in
            let coturn = try Coturn()
            defer { coturn.stop() }
            let socket = try UDPSocket(bind: Endpoint(address: .loopbackV4, port: 0))
            var random = SystemRandomNumberGenerator()
            let request = STUNMessage(method: .binding, messageClass: .request, transactionID: .random(using: &random),
                                      attributes: [.software("ZoneRTC interop")])
            let clock = WallClock()
            for _ in 0..<10 {
                _ = socket.send(try request.encode(fingerprint: true), to: coturn.server)
                let (datagrams, _) = SocketWait.wait([socket], until: clock.now() + .milliseconds(500), clock: clock)
                for d in datagrams {
                    guard let m = try? STUNMessage(decoding: d.bytes), m.transactionID == request.transactionID,
                          m.messageClass == .successResponse else { continue }
                    return BindingReport(local: socket.localEndpoint, mapped: m.xorMappedAddress,
                                         plainMapped: m.mappedAddress, software: m.software)
                }
            }
            throw InteropFailure("no Binding success response from turnserver:\n\(coturn.process.logTail())")
        }
        print("coturn Binding: local \(report.local), "
              + "XOR-MAPPED-ADDRESS \(report.mapped.map(String.init(describing:)) ?? "none"), "
              + "server \(report.software ?? "?")")
        #expect(report.mapped == report.local)
    }

    struct TURNReport: Sendable {
        var socket: Endpoint
        var relayed: Endpoint?
        var mapped: Endpoint?
        var relayPorts: ClosedRange<UInt16>
        var peer: Endpoint
        var events: [TURNClient.Event]
        var errorCodes: [Int]
        var channelDataSent: Int
        var sendIndications: Int
        var secondAllocation: Bool
        var log: String
    }

    @Test("our TURN client against turnserver: allocation, permission, channel, echoes, refresh, deallocation")
    func turnClient() async throws {
        guard Self.coturnAvailable() else { return }
        let report = try await offPool { () throws -> TURNReport in
            // Short allocation lifetime and nonce lifetime so refresh and 438 happen within seconds.
            let coturn = try Coturn(extraArguments: ["--max-allocate-lifetime=4", "--stale-nonce=1"])
            defer { coturn.stop() }
            let peer = try EchoPeer()
            let socket = try UDPSocket(bind: Endpoint(address: .loopbackV4, port: 0))
            func configuration(seed: UInt64) -> TURNClientConfiguration {
                TURNClientConfiguration(server: coturn.server, username: Coturn.user, password: Coturn.password,
                                        timing: STUNTransactionTiming(initialRTO: .milliseconds(200)), seed: seed)
            }
            let driver = TURNClientDriver(socket: socket, configuration: configuration(seed: 1))
            let failure = { (what: String) in
                InteropFailure("\(what); events \(driver.events); turnserver:\n\(coturn.process.logTail())")
            }
            guard driver.run(timeout: .seconds(5), until: { $0.client.phase != .allocating }),
                  driver.client.phase == .allocated else { throw failure("no allocation") }
            // A datagram to the echo peer: CreatePermission, then a Send indication; the echo
            // comes back in a Data indication.
            try driver.client.send(Array("ping over Send".utf8), to: peer.address, now: driver.clock.now())
            guard driver.run(timeout: .seconds(5), until: { $0.received.count == 1 }) else {
                throw failure("no echo of the Send indication")
            }
            // The channel bound meanwhile; the next datagram goes as ChannelData and comes back so.
            guard driver.run(timeout: .seconds(5), until: { $0.client.channel(for: peer.address) != nil }) else {
                throw failure("no channel")
            }
            try driver.client.send(Array("ping over ChannelData".utf8), to: peer.address, now: driver.clock.now())
            guard driver.run(timeout: .seconds(5), until: { $0.received.count == 2 }) else {
                throw failure("no echo of the ChannelData")
            }
            // Refresh: the 4 s lifetime is refreshed at 2 s, after the 1 s nonce went stale (438).
            guard driver.run(timeout: .seconds(10), until: { d in
                d.events.contains { if case .refreshed = $0 { true } else { false } }
            }) else { throw failure("no refresh") }
            let oldExpiry = driver.client.expiresAt ?? driver.clock.now()
            driver.client.deallocate(now: driver.clock.now())
            guard driver.run(timeout: .seconds(5), until: { $0.events.last == .deallocated }) else {
                throw failure("no deallocation")
            }
            // The server really let the allocation go: a new one on the same 5-tuple succeeds
            // before the old one would have expired (while it lives, Allocate gets 437).
            // turnserver frees a deleted allocation on its next timer tick, within about a second.
            var again = TURNClientDriver(socket: socket, configuration: configuration(seed: 2))
            for n in 0..<40 where again.clock.now() < oldExpiry {
                again = TURNClientDriver(socket: socket, configuration: configuration(seed: 2 + UInt64(n)))
                again.run(timeout: .seconds(2)) { $0.client.phase != .allocating }
                if again.client.phase == .allocated { break }
                _ = SocketWait.wait([], until: again.clock.now() + .milliseconds(100), clock: again.clock)
            }
            let secondAllocation = again.client.phase == .allocated && again.clock.now() < oldExpiry
            again.client.deallocate(now: again.clock.now())
            again.run(timeout: .seconds(5)) { $0.client.phase == .closed }
            return TURNReport(socket: socket.localEndpoint, relayed: driver.client.relayedAddress ?? nil,
                              mapped: driver.client.mappedAddress,
                              relayPorts: coturn.relayPorts, peer: peer.address, events: driver.events,
                              errorCodes: driver.errorCodes, channelDataSent: driver.client.counters.channelDataSent,
                              sendIndications: driver.client.counters.sendIndications,
                              secondAllocation: secondAllocation, log: coturn.process.logTail(5))
        }
        let relayed = report.events.compactMap { if case .allocated(let r, _) = $0 { r } else { nil } }.first
        print("coturn TURN: socket \(report.socket), relayed \(relayed.map(String.init(describing:)) ?? "none"), "
              + "mapped \(report.mapped.map(String.init(describing:)) ?? "none"), "
              + "server error codes \(report.errorCodes), "
              + "\(report.sendIndications) Send indications, \(report.channelDataSent) ChannelData, "
              + "second allocation on the same socket: \(report.secondAllocation)")
        print("coturn TURN events: \(report.events)")
        #expect(report.mapped == report.socket)
        #expect(relayed.map { $0.address == .loopbackV4 && report.relayPorts.contains($0.port) } == true)
        #expect(report.events.contains(.permissionCreated(report.peer.address)))
        #expect(report.events.contains { if case .channelBound(_, report.peer) = $0 { true } else { false } })
        let echoes = report.events.compactMap { event -> (String, Endpoint)? in
            if case .data(let b, let f) = event { (String(decoding: b, as: UTF8.self), f) } else { nil }
        }
        #expect(echoes.map(\.0) == ["ping over Send", "ping over ChannelData"])
        #expect(echoes.allSatisfy { $0.1 == report.peer })
        #expect(report.sendIndications == 1 && report.channelDataSent == 1)
        #expect(report.events.contains(.refreshed(lifetime: .seconds(4))))
        #expect(report.errorCodes.first == 401 && report.errorCodes.contains(438))
        #expect(!report.events.contains { if case .requestFailed = $0 { true } else { false } })
        #expect(report.events.last == .deallocated)
        #expect(report.secondAllocation)
    }

    @Test("a wrong password: turnserver's 401 becomes allocationFailed(401)")
    func wrongPassword() async throws {
        guard Self.coturnAvailable() else { return }
        let events = try await offPool { () throws -> [TURNClient.Event] in
            let coturn = try Coturn()
            defer { coturn.stop() }
            let socket = try UDPSocket(bind: Endpoint(address: .loopbackV4, port: 0))
            let driver = TURNClientDriver(socket: socket, configuration: TURNClientConfiguration(
                server: coturn.server, username: Coturn.user, password: "wrong", seed: 3))
            driver.run(timeout: .seconds(5)) { $0.client.phase == .closed }
            return driver.events
        }
        print("coturn wrong password: \(events)")
        #expect(events.count == 1)
        #expect(events.first.map { if case .allocationFailed(401, _) = $0 { true } else { false } } == true)
    }
}
