import Testing
import ZoneCore
@testable import RecordStore

/// Web push tokens in the store's formats: journal tags 14 and 15, snapshot 3 (written only when the
/// store holds a token, so a store without one stays readable by earlier builds), log entries of
/// version 4 (only those that hold a token mutation).
@Suite struct WebPushTokenFormatTests {
    let now = Instant(nanosecondsSinceEpoch: 1_000_000_000)
    let digest = String(repeating: "ab", count: 32)

    private func engineWithToken() throws -> StoreEngine {
        var engine = StoreEngine()
        let ctx = RequestContext(user: "alice", deviceID: "webcourier", now: now)
        _ = try engine.createWebToken(digest: digest, environment: "development", container: "iCloud.x",
                                      maxPerUser: 2, ctx)
        _ = try engine.registerWebToken(digest: digest, environment: "development", ctx)
        return engine
    }

    @Test func mutationsRoundTripAndReplay() throws {
        var engine = try engineWithToken()
        let mutations = engine.drainMutations()
        var w = ByteWriter(capacity: 64)
        MutationCodec.encode(mutations, into: &w)
        var r = ByteReader(w.bytes)
        let decoded = try MutationCodec.decodeMutations(&r)
        #expect(decoded == mutations)
        var replayed = StoreEngine()
        for m in decoded { replayed.replay(m) }
        #expect(replayed.webToken(digest: digest)?.registered == true)
        #expect(replayed.webToken(digest: digest)?.container == "iCloud.x")
        #expect(SharedLogEntryCodec.encode(mutations, []).first == SharedLogEntryCodec.versionWithWebTokens)
        #expect(SharedLogEntryCodec.encode([.registerDevice(user: "a", deviceID: "b")], []).first
                == SharedLogEntryCodec.version)
    }

    @Test func snapshotThreeOnlyWithTokens() throws {
        let engine = try engineWithToken()
        let with = SnapshotCodec.encode(engine.state, generation: 3, pruneTombstonesBeforeMs: 0)
        #expect(Array(with.prefix(8)) == SnapshotCodec.magicWithWebTokens)
        let back = try SnapshotCodec.decode(with)
        #expect(back.state.webTokens[digest]?.user == "alice" && back.state.webTokens.count == 1)
        let without = SnapshotCodec.encode(StoreEngine().state, generation: 1, pruneTombstonesBeforeMs: 0)
        #expect(Array(without.prefix(8)) == SnapshotCodec.magic)
    }

    @Test func theOldestIsForgottenPastTheLimitAndOnlyItsUserRegistersIt() throws {
        var engine = StoreEngine()
        let alice = RequestContext(user: "alice", deviceID: "webcourier", now: now)
        var forgotten: [String] = []
        for i in 0..<3 {
            forgotten += try engine.createWebToken(digest: String(repeating: "\(i)", count: 64),
                                                   environment: "production", container: "c", maxPerUser: 2, alice)
        }
        #expect(forgotten == [String(repeating: "0", count: 64)])
        let bob = RequestContext(user: "bob", deviceID: "webcourier", now: now)
        let theirs = String(repeating: "1", count: 64)
        #expect(throws: StoreError.self) {
            _ = try engine.registerWebToken(digest: theirs, environment: "production", bob)
        }
        #expect(throws: StoreError.self) {
            _ = try engine.registerWebToken(digest: theirs, environment: "development", alice)
        }
        #expect(throws: StoreError.self) {
            _ = try engine.createWebToken(digest: "not hex", environment: "production", container: "c",
                                          maxPerUser: 2, alice)
        }
    }
}
