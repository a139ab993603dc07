import RecordStore
import Testing
import ZoneCore

@testable import Signaling

/// A peer that hangs up deletes its records of the call (its goodbye); the other reads the
/// deletion of the remote's description of the active epoch as the hang-up (docs/PROTOCOL.md §7),
/// and nothing else as one: GC sweeps and chunk deletions during the call are not goodbyes.
@Suite("Remote hang-up")
struct RemoteHangUpTests {
    @Test("the answerer's goodbye reaches the offerer, and the offerer's the answerer",
          arguments: [true, false])
    func goodbyeIsRead(answererHangsUp: Bool) async throws {
        let h = try await CallHarness()
        await h.startCall()
        #expect(await h.connect(within: .seconds(20)))
        let epoch = try #require(h.a.ice.connectedEpoch)
        // Connected for 90 s: GC sweeps (right after connecting, then every minute) delete nothing
        // the other side takes for a goodbye.
        await h.run(for: .seconds(90)) { false }
        #expect(h.a.remoteHangUps.isEmpty && h.b.remoteHangUps.isEmpty)

        let (leaving, staying) = answererHangsUp ? (h.b, h.a) : (h.a, h.b)
        await leaving.send(.hangUp, now: h.now)
        await h.run(for: .seconds(10)) { !staying.remoteHangUps.isEmpty }
        let seen = try #require(staying.remoteHangUps.first, "the goodbye was not read")
        #expect(seen.epoch == epoch)
        // The remote's description: the answer for the offerer (A), the offer for the answerer (B).
        #expect(seen.type == (answererHangsUp ? .answer : .offer))
        #expect(staying.remoteHangUps.count == 1)
        #expect(leaving.remoteHangUps.isEmpty)
    }
}
