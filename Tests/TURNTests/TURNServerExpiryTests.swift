import STUN
import Testing
@testable import TURN
import ZoneCore

extension TURNServerTests {
    @Test("5,000 allocations with staggered lifetimes expire at their instants; nextDeadline follows changes")
    func manyExpiries() {
        var configuration = configuration()
        configuration.relayPorts = 10000...20000
        configuration.maxAllocationsPerUser = 10_000
        var turn = TURNServer(configuration: configuration, seed: 3)
        let count = 5_000
        var clients: [(endpoint: Endpoint, client: Client)] = []
        var relayOf: [Endpoint: Endpoint] = [:]
        // What each relayed address should close at; the earliest permission, which also wakes the timer.
        var closesAt: [Endpoint: Instant] = [:]
        var permissionsUntil: [Instant] = []
        for i in 0..<count {
            let endpoint = Endpoint(address: .loopbackV4, port: UInt16(30000 + i))
            var c = Client()
            // Lifetimes 600–3599 s, many sharing an instant, in no order of allocation.
            let seconds = 600 + (i &* 7919) % 3000
            let (relay, answer) = allocate(&turn, &c, from: endpoint, extra: [.lifetime(seconds: UInt32(seconds))],
                                           now: t0)
            #expect(answer?.lifetime == UInt32(seconds))
            relayOf[endpoint] = relay!
            closesAt[relay!] = t0 + .seconds(Int64(seconds))
            clients.append((endpoint, c))
        }
        #expect(turn.nextDeadline == closesAt.values.min())

        // Refresh every third to a new lifetime, delete every fifth, add a permission to every seventh.
        let later = t0 + .seconds(10)
        for i in 0..<count {
            var (endpoint, c) = clients[i]
            let relay = relayOf[endpoint]!
            if i % 5 == 0 {
                let gone = turn.outputs(after: .clientDatagram(c.request(.refresh, [.lifetime(seconds: 0)]),
                                                              from: endpoint, to: server), now: later)
                #expect(gone.contains(.closeRelay(relay)))
                closesAt[relay] = nil
            } else if i % 3 == 0 {
                let seconds = 600 + (i &* 104_729) % 3000
                let request = c.request(.refresh, [.lifetime(seconds: UInt32(seconds))])
                let r = reply(turn.outputs(after: .clientDatagram(request, from: endpoint, to: server), now: later))
                #expect(r?.lifetime == UInt32(seconds))
                closesAt[relay] = later + .seconds(Int64(seconds))
            }
            if i % 7 == 0 && i % 5 != 0 {
                _ = turn.outputs(after: .clientDatagram(c.request(.createPermission, [.xorPeerAddress(peer)]),
                                                        from: endpoint, to: server), now: later)
                permissionsUntil.append(later + .seconds(300))
            }
            clients[i].client = c
        }
        #expect(turn.activeAllocations == count - count / 5)
        #expect(turn.nextDeadline == (closesAt.values + permissionsUntil).min())

        // Fire the timer at each deadline it names: exactly what is due closes, at its own instant.
        let instants = Set(closesAt.values).union(permissionsUntil).sorted()
        var closedAt: [Endpoint: Instant] = [:]
        var timers = 0
        while let deadline = turn.nextDeadline, timers < instants.count {
            #expect(deadline == instants[timers])
            timers += 1
            for case .closeRelay(let relay) in turn.outputs(after: .timer, now: deadline) {
                #expect(closedAt[relay] == nil)
                closedAt[relay] = deadline
            }
        }
        #expect(timers == instants.count)
        #expect(turn.nextDeadline == nil)
        #expect(closedAt == closesAt)
        #expect(turn.activeAllocations == 0)
    }

    @Test("an EVEN-PORT reservation wakes the timer at 30 s and is gone after; a taken one no longer counts")
    func reservationExpiry() {
        var turn = TURNServer(configuration: configuration(), seed: 1)
        var c = Client()
        let (_, r) = allocate(&turn, &c, extra: [.evenPort(reserveNextPort: true)], now: t0)
        let token = try! #require(r?.reservationToken)
        #expect(turn.nextDeadline == t0 + .seconds(30))
        _ = turn.outputs(after: .timer, now: t0 + .seconds(30))
        #expect(turn.nextDeadline == t0 + .seconds(600))
        let other = try! Endpoint(parsing: "127.0.0.1:40002")
        let (late, answer) = allocate(&turn, &c, from: other, extra: [.reservationToken(token)], now: t0 + .seconds(31))
        #expect(late == nil && answer?.errorCode?.code == 508)

        // Taken before it expires, the reservation leaves only the allocations' expiries.
        var turn2 = TURNServer(configuration: configuration(), seed: 1)
        var c2 = Client()
        let (_, r2) = allocate(&turn2, &c2, extra: [.evenPort(reserveNextPort: true)], now: t0)
        let token2 = try! #require(r2?.reservationToken)
        let (taken, _) = allocate(&turn2, &c2, from: other, extra: [.reservationToken(token2)], now: t0 + .seconds(5))
        #expect(taken != nil)
        #expect(turn2.nextDeadline == t0 + .seconds(600))
    }
}
