import Foundation
import RecordStore
import Signaling
import StoreServer
import Testing
import TestSupport
import ZoneCore

/// `zonertc peer` against what the other user of the room wrote to hurt it (issue #13): real
/// processes through a real store daemon.
@Suite("zonertc peer against hostile records", .serialized)
struct HostilePeerProcessTests {
    /// Registers `user` on the daemon and returns its token.
    private func token(_ user: String, _ daemon: DaemonProcess) async throws -> String {
        try await RemoteStoreClient.register(userName: user, at: daemon.endpoint)
    }

    private func client(_ user: String, token: String, _ daemon: DaemonProcess) -> RemoteStoreClient {
        RemoteStoreClient(configuration: .init(endpoint: daemon.endpoint, token: token), userRecordName: user,
                          deviceID: "\(user)-device")
    }

    private func peer(_ me: String, _ remote: String, room: RoomID, token: String, owner: Bool,
                      _ daemon: DaemonProcess) throws -> ChildProcess {
        try .zonertc(["peer", "--store", "http://\(daemon.endpoint)", "--room", room.rawValue, "--me", me,
                      "--remote", remote, "--token", token, "--duration", "300ms", "--connect-timeout", "20s",
                      "--json"] + (owner ? ["--owner"] : []))
    }

    @Test("a SignalSession and an offer with callEpoch Int64.max: logged, counted, and the room still works")
    func largestEpochInTheRoom() async throws {
        let daemon = try DaemonProcess(arguments: ["--memory"])
        let room = try RoomID("room_hstl0001")
        let aliceToken = try await token("alice", daemon), bobToken = try await token("bob", daemon)
        // Alice's room exists; Bob joins it and writes the hostile session and offer.
        let alice = client("alice", token: aliceToken, daemon)
        _ = try await alice.setUp(RoomSetup(roomID: room, role: .owner, myUserID: "alice", displayName: "alice"))
            .get()
        let bob = client("bob", token: bobToken, daemon)
        let binding = try await bob.setUp(RoomSetup(roomID: room, role: .participant(ownerUserID: "alice"),
                                                    myUserID: "bob", displayName: "bob")).get()
        let key = try SessionKey(roomID: room, users: "alice", "bob")
        let names = SignalRecordNames(sessionKey: key)
        let evil = CallEpoch(milliseconds: .max)
        let session = SignalSession(sessionKey: key.rawValue, roomID: room.rawValue, userID: "bob",
                                    otherUserID: "alice", callEpoch: evil, updatedAtMs: 0)
            .record(over: nil, name: names.session, in: binding.zone)
        var offer = session
        offer.recordType = SignalRecordType.envelope
        offer.id = RecordID(recordName: names.envelope(epoch: evil, type: .offer), zoneID: binding.zone)
        offer.fields = [SignalField.sessionKey: .string(key.rawValue), SignalField.roomID: .string(room.rawValue),
                        SignalField.callEpoch: .int64(.max), SignalField.ownerUserId: .string("bob"),
                        SignalField.envelopeType: .string("offer"), SignalField.payload: .string("v=0 garbage"),
                        SignalField.updatedAt: .timestamp(0)]
        let saved = await bob.perform(StoreRequest(scope: binding.scope, .modifyRecords(
            ModifyRecordsRequest(saves: [session, offer], savePolicy: .allKeys, atomic: false))))
        guard case .modified(let result) = saved, result.results.allSatisfy({ $0.record != nil })
        else {
            Issue.record("the hostile records were not saved: \(saved)")
            return
        }

        // An honest call in that room: Alice (the offer creator) reads the hostile session first.
        let a = try peer("alice", "bob", room: room, token: aliceToken, owner: true, daemon)
        let b = try peer("bob", "alice", room: room, token: bobToken, owner: false, daemon)
        let (statusA, statusB) = try await offPool { (a.wait(seconds: 60), b.wait(seconds: 60)) }
        #expect(statusA == 0, "alice: \(a.stderr)\n\(a.stdout)")
        #expect(statusB == 0, "bob: \(b.stderr)\n\(b.stdout)")
        #expect(a.stderr.contains("warning") && a.stderr.contains(names.session), "alice logged: \(a.stderr)")
        #expect(a.stderr.contains("ahead of this device's clock"), "alice logged: \(a.stderr)")
        struct Summary: Decodable { var outcome: String; var malformedRecords: Int? }
        let last = a.stdout.split(separator: "\n").last ?? ""
        let summary = try JSONDecoder().decode(Summary.self, from: Data(last.utf8))
        #expect(summary.outcome == "completed")
        #expect((summary.malformedRecords ?? 0) >= 1, "alice: \(a.stdout)")
    }
}

/// A call whose remote process dies (issue #13, item 6): real processes, kill -9.
@Suite("zonertc peer when the remote dies", .serialized)
struct UnreachablePeerProcessTests {
    @Test("kill -9 one of two connected peers: the other ends with 'remote unreachable' within the bound, exit 1")
    func remoteKilled() async throws {
        // Consent lost after 3 s, 2 s for a new epoch: the bound is 5 s after the last response.
        let (daemon, a, b) = try await connectedPeers(room: "room_kill0001",
                                                      ["--consent-expiry", "3s", "--reconnect-timeout", "2s"])
        defer { withExtendedLifetime(daemon) {} }
        b.kill()
        let killed = Date()
        let status = try await offPool { a.wait(seconds: 30) }
        let took = Date().timeIntervalSince(killed)
        #expect(status == 1, "alice: \(a.stderr)\n\(a.stdout)")
        // The bound (5 s) plus a consent period and scheduling slack on a loaded machine.
        #expect(took < 9, "alice ended \(took) s after bob was killed")
        #expect(took >= 2.5, "alice ended \(took) s after bob was killed: before consent could expire")
        struct Summary: Decodable { var outcome: String; var reason: String? }
        let last = a.stdout.split(separator: "\n").last ?? ""
        let summary = try JSONDecoder().decode(Summary.self, from: Data(last.utf8))
        #expect(summary.outcome == "failed")
        #expect(summary.reason?.hasPrefix("remote unreachable") == true, "\(summary.reason ?? "no reason")")
    }
}

/// A call whose remote user hangs up (docs/PROTOCOL.md §7): the goodbye is read from the zone.
@Suite("zonertc peer when the remote hangs up", .serialized)
struct RemoteHangUpProcessTests {
    @Test("Ctrl-C one of two connected peers: the other reads its goodbye and ends as planned, exit 0")
    func remoteInterrupted() async throws {
        // Consent would take 30 s to expire: ending sooner can only come from the goodbye.
        let (daemon, a, b) = try await connectedPeers(room: "room_bye00001", ["--consent-expiry", "30s"])
        defer { withExtendedLifetime(daemon) {} }
        b.interrupt()
        let stopped = Date()
        let (statusA, statusB) = try await offPool { (a.wait(seconds: 25), b.wait(seconds: 25)) }
        let took = Date().timeIntervalSince(stopped)
        #expect(statusB != nil, "bob did not stop on Ctrl-C: \(b.stderr)")
        #expect(statusA == 0, "alice: \(a.stderr)\n\(a.stdout)")
        #expect(took < 10, "alice ended \(took) s after bob hung up")
        #expect(a.stderr.contains("bob hung up (its answer of epoch"), "alice: \(a.stderr)")
        struct Summary: Decodable { var outcome: String }
        let last = a.stdout.split(separator: "\n").last ?? ""
        let summary = try JSONDecoder().decode(Summary.self, from: Data(last.utf8))
        #expect(summary.outcome == "completed")
    }
}

/// A daemon and two `zonertc peer`s (alice owns the room) with `options`, connected (both logged
/// their selected pair), for the tests that then end one of them.
private func connectedPeers(room: String, _ options: [String]) async throws
    -> (DaemonProcess, ChildProcess, ChildProcess) {
    let daemon = try DaemonProcess(arguments: ["--memory"])
    let aliceToken = try await RemoteStoreClient.register(userName: "alice", at: daemon.endpoint)
    let bobToken = try await RemoteStoreClient.register(userName: "bob", at: daemon.endpoint)
    func peer(_ me: String, _ remote: String, _ token: String, owner: Bool) throws -> ChildProcess {
        try .zonertc(["peer", "--store", "http://\(daemon.endpoint)", "--room", room, "--me", me, "--remote", remote,
                      "--token", token, "--connect-timeout", "20s", "--json"] + options + (owner ? ["--owner"] : []))
    }
    let a = try peer("alice", "bob", aliceToken, owner: true)
    let b = try peer("bob", "alice", bobToken, owner: false)
    let up = try await offPool {
        a.waitForStderr("selected pair", seconds: 30) && b.waitForStderr("selected pair", seconds: 30)
    }
    #expect(up, "alice: \(a.stderr)\nbob: \(b.stderr)")
    return (daemon, a, b)
}
