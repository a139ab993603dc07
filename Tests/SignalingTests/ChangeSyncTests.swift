// The change-sync machine (spec §5): when each strategy fetches, what it asks, how it keeps
// tokens and waits out throttling. Driven by hand: no store, a manual `now`.
import Foundation
import RecordStore
import Testing
import ZoneCore

@testable import Signaling

private let zone = ZoneID(zoneName: "room_sync0001", ownerName: "_owner")
private let t0 = Instant.seconds(1_700_000_000)

/// A store that issues tokens: enough to drive `ChangeSync` through its results.
private struct TokenMint {
    private var engine = StoreEngine()
    private let ctx = RequestContext(user: "_owner", deviceID: "d", now: t0)

    init() {
        _ = try! engine.modifyZones(save: [zone], delete: [], scope: .private, ctx)
    }

    mutating func zoneChanges(records: Int = 0, moreComing: Bool = false) -> ZoneChanges {
        let saves = (0..<records).map { i in
            Record(recordType: "Note", id: RecordID(recordName: "n\(UUID())\(i)", zoneID: zone),
                   fields: ["f": .string("x")])
        }
        if !saves.isEmpty { _ = try! engine.modifyRecords(ModifyRecordsRequest(saves: saves), scope: .private, ctx) }
        var changes = try! engine.fetchZoneChanges(zone, since: nil, scope: .private, ctx)
        changes.moreComing = moreComing
        return changes
    }

    mutating func databaseChanges(zones: [ZoneID] = [zone], deleted: [ZoneID] = []) -> DatabaseChanges {
        var changes = try! engine.fetchDatabaseChanges(since: nil, scope: .private, ctx)
        changes.changedZones = zones
        changes.deletedZones = deleted
        return changes
    }
}

private func sync(_ strategy: SyncStrategy, only: Bool = false) -> ChangeSync {
    ChangeSync(strategy: strategy, zone: zone, scope: .private, pollsOnlyWhileNegotiating: only)
}

private func note(zone hint: ZoneID? = nil, scope: DatabaseScope = .private) -> PushNotification {
    PushNotification(notificationID: 1, subscriptionID: "s", databaseScope: scope, zoneID: hint)
}

@Suite("Change sync")
struct ChangeSyncTests {
    @Test func pushFetchesDatabaseThenZoneChangesWithStoredTokens() {
        var mint = TokenMint()
        var s = sync(.push)
        #expect(s.outputs(after: .start, now: t0) == [.fetchZoneChanges(since: nil)])  // catch-up
        let first = mint.zoneChanges(records: 2)
        #expect(s.outputs(after: .zoneChanges(first), now: t0) == [.deliver(first)])
        #expect(s.nextDeadline == nil)  // push alone never polls
        #expect(s.outputs(after: .notification(note()), now: t0) == [.fetchDatabaseChanges(since: nil)])
        let db = mint.databaseChanges()
        #expect(s.outputs(after: .databaseChanges(db), now: t0) == [.fetchZoneChanges(since: first.syncToken)])
        #expect(s.databaseToken == db.syncToken)
        let second = mint.zoneChanges(records: 1)
        #expect(s.outputs(after: .zoneChanges(second), now: t0) == [.deliver(second)])
        #expect(s.zoneToken == second.syncToken)
        // A change elsewhere in the database: no zone fetch.
        _ = s.outputs(after: .notification(note()), now: t0)
        #expect(s.outputs(after: .databaseChanges(mint.databaseChanges(zones: [])), now: t0) == [])
        // A zone hint goes straight to the zone; another database's notification is not ours.
        #expect(s.outputs(after: .notification(note(zone: zone)), now: t0)
                == [.fetchZoneChanges(since: second.syncToken)])
        _ = s.outputs(after: .zoneChanges(mint.zoneChanges()), now: t0)
        #expect(s.outputs(after: .notification(note(scope: .shared)), now: t0) == [])
        #expect(s.counters.notifications == 4 && s.counters.requests == 5)
    }

    @Test func aPathWatchingOneZoneFetchesItDirectlyOnEveryPush() throws {
        var mint = TokenMint()
        var s = ChangeSync(strategy: .hybrid, zone: zone, scope: .shared, pushFetchesZone: true)
        _ = s.outputs(after: .start, now: t0)
        let first = mint.zoneChanges(records: 1)
        _ = s.outputs(after: .zoneChanges(first), now: t0)
        // A database subscription's push names no zone: one zone fetch, no database fetch.
        #expect(s.outputs(after: .notification(note(scope: .shared)), now: t0)
                == [.fetchZoneChanges(since: first.syncToken)])
        // Pushes (and a leg's fetch-now) during that fetch: one follow-up, from the new token.
        #expect(s.outputs(after: .notification(note(scope: .shared)), now: t0) == [])
        #expect(s.outputs(after: .notification(note(zone: ZoneID(zoneName: "other", ownerName: "x"),
                                                     scope: .shared)), now: t0) == [])
        #expect(s.outputs(after: .fetchNow, now: t0) == [])
        let second = mint.zoneChanges(records: 1)
        #expect(s.outputs(after: .zoneChanges(second), now: t0)
                == [.deliver(second), .fetchZoneChanges(since: second.syncToken)])
        #expect(s.outputs(after: .zoneChanges(mint.zoneChanges()), now: t0).count == 1)
        #expect(s.counters.notifications == 3 && s.counters.requests == 3 && s.databaseToken == nil)
        // A zone gone (share revoked or zone deleted) is still found: by the zone fetch.
        _ = s.outputs(after: .notification(note(scope: .shared)), now: t0)
        let gone = StoreError(.zoneNotFound, "zone deleted")
        #expect(s.outputs(after: .failed(gone), now: t0) == [.zoneUnavailable(gone)])
    }

    @Test func triggersDuringAFetchAreCoalescedIntoOneFollowUp() {
        var mint = TokenMint()
        var s = sync(.push)
        _ = s.outputs(after: .start, now: t0)
        #expect(s.outputs(after: .notification(note(zone: zone)), now: t0) == [])
        #expect(s.outputs(after: .notification(note(zone: zone)), now: t0) == [])
        let page = mint.zoneChanges()
        #expect(s.outputs(after: .zoneChanges(page), now: t0)
                == [.deliver(page), .fetchZoneChanges(since: page.syncToken)])
        #expect(s.outputs(after: .zoneChanges(page), now: t0) == [.deliver(page)])
    }

    @Test func moreComingIsFollowed() {
        var mint = TokenMint()
        var s = sync(.pollToken)
        _ = s.outputs(after: .start, now: t0)
        let page = mint.zoneChanges(records: 1, moreComing: true)
        #expect(s.outputs(after: .zoneChanges(page), now: t0)
                == [.deliver(page), .fetchZoneChanges(since: page.syncToken)])
    }

    @Test func tokenPollEveryTwoSeconds() {
        var mint = TokenMint()
        var s = sync(.pollToken)
        _ = s.outputs(after: .start, now: t0)
        let page = mint.zoneChanges()
        _ = s.outputs(after: .zoneChanges(page), now: t0)
        #expect(s.nextDeadline == t0 + .seconds(2))
        #expect(s.outputs(after: .timer, now: t0 + .seconds(1)) == [])
        #expect(s.outputs(after: .timer, now: t0 + .seconds(2)) == [.fetchZoneChanges(since: page.syncToken)])
    }

    @Test func fullScanNeverKeepsATokenAndFollowsItsPages() {
        var mint = TokenMint()
        var s = sync(.pollFullScan)
        #expect(s.outputs(after: .start, now: t0) == [.fetchZoneChanges(since: nil)])
        let page = mint.zoneChanges(records: 1, moreComing: true)
        #expect(s.outputs(after: .zoneChanges(page), now: t0)
                == [.deliver(page), .fetchZoneChanges(since: page.syncToken)])
        let last = mint.zoneChanges()
        #expect(s.outputs(after: .zoneChanges(last), now: t0) == [.deliver(last)])
        #expect(s.zoneToken == nil)
        #expect(s.outputs(after: .timer, now: t0 + .seconds(2)) == [.fetchZoneChanges(since: nil)])
        #expect(s.counters.fullScans == 2)
    }

    @Test func hybridPollsFastOnlyWhileNegotiating() {
        var s = sync(.hybrid)
        _ = s.outputs(after: .start, now: t0)
        var mint = TokenMint()
        _ = s.outputs(after: .zoneChanges(mint.zoneChanges()), now: t0)
        #expect(s.nextDeadline == t0 + .seconds(30))
        _ = s.outputs(after: .negotiating(true), now: t0)
        #expect(s.nextDeadline == t0 + .seconds(2))
        _ = s.outputs(after: .negotiating(false), now: t0 + .seconds(1))
        #expect(s.nextDeadline == t0 + .seconds(2))  // the poll due keeps its time, then slows down
        _ = s.outputs(after: .timer, now: t0 + .seconds(2))
        _ = s.outputs(after: .zoneChanges(mint.zoneChanges()), now: t0 + .seconds(2))
        #expect(s.nextDeadline == t0 + .seconds(32))
    }

    @Test func pathsThatPollOnlyWhileNegotiatingStopWhenConnected() {
        var s = sync(.pollFullScan, only: true)
        _ = s.outputs(after: .start, now: t0)
        var mint = TokenMint()
        _ = s.outputs(after: .zoneChanges(mint.zoneChanges()), now: t0)
        #expect(s.nextDeadline == nil)
        _ = s.outputs(after: .negotiating(true), now: t0)
        #expect(s.nextDeadline == t0 + .seconds(2))
        _ = s.outputs(after: .negotiating(false), now: t0)
        #expect(s.nextDeadline == nil)
    }

    @Test func anExpiredTokenIsDroppedOnce() {
        var mint = TokenMint()
        var s = sync(.pollToken)
        _ = s.outputs(after: .start, now: t0)
        let page = mint.zoneChanges()
        _ = s.outputs(after: .zoneChanges(page), now: t0)
        #expect(s.outputs(after: .fetchNow, now: t0) == [.fetchZoneChanges(since: page.syncToken)])
        let expired = StoreError(.changeTokenExpired, "old")
        #expect(s.outputs(after: .failed(expired), now: t0) == [.fetchZoneChanges(since: nil)])
        #expect(s.zoneToken == nil && s.counters.tokenResets == 1)
        // The database token too.
        var p = sync(.push)
        _ = p.outputs(after: .start, now: t0)
        _ = p.outputs(after: .zoneChanges(page), now: t0)
        _ = p.outputs(after: .notification(note()), now: t0)
        let db = mint.databaseChanges(zones: [])
        _ = p.outputs(after: .databaseChanges(db), now: t0)
        #expect(p.outputs(after: .notification(note()), now: t0) == [.fetchDatabaseChanges(since: db.syncToken)])
        #expect(p.outputs(after: .failed(expired), now: t0) == [.fetchDatabaseChanges(since: nil)])
    }

    @Test func rateLimitingWaitsRetryAfterThenRetries() {
        var s = sync(.pollToken)
        _ = s.outputs(after: .start, now: t0)
        let limited = StoreError(.requestRateLimited, "slow down", retryAfter: 20)
        #expect(s.outputs(after: .failed(limited), now: t0) == [])
        #expect(s.nextDeadline == t0 + .seconds(20) && s.counters.throttled == 1)
        #expect(s.outputs(after: .timer, now: t0 + .seconds(19)) == [])
        #expect(s.outputs(after: .fetchNow, now: t0 + .seconds(19)) == [])  // still waiting
        #expect(s.outputs(after: .timer, now: t0 + .seconds(20)) == [.fetchZoneChanges(since: nil)])
    }

    @Test func zoneBusyBacksOffExponentially() {
        var s = sync(.pollToken)
        _ = s.outputs(after: .start, now: t0)
        let busy = StoreError(.zoneBusy, "busy")
        var now = t0
        var waits: [Duration] = []
        for _ in 0..<8 {
            _ = s.outputs(after: .failed(busy), now: now)
            let wake = s.nextDeadline!
            waits.append(wake - now)
            now = wake
            #expect(s.outputs(after: .timer, now: now) == [.fetchZoneChanges(since: nil)])
        }
        #expect(waits == [1, 2, 4, 8, 16, 32, 60, 60].map { Duration.seconds($0) })
        var mint = TokenMint()
        _ = s.outputs(after: .zoneChanges(mint.zoneChanges()), now: now)
        _ = s.outputs(after: .fetchNow, now: now)
        _ = s.outputs(after: .failed(busy), now: now)
        #expect(s.nextDeadline == now + .seconds(1))  // success resets the backoff
    }

    @Test func aDeletedZoneStopsThePath() {
        var mint = TokenMint()
        var s = sync(.hybrid)
        _ = s.outputs(after: .start, now: t0)
        _ = s.outputs(after: .zoneChanges(mint.zoneChanges()), now: t0)
        _ = s.outputs(after: .notification(note()), now: t0)
        let gone = s.outputs(after: .databaseChanges(mint.databaseChanges(zones: [], deleted: [zone])), now: t0)
        guard case .zoneUnavailable(let error)? = gone.first else {
            Issue.record("no zoneUnavailable: \(gone)")
            return
        }
        #expect(error.code == .zoneNotFound)
        #expect(s.outputs(after: .timer, now: t0 + .seconds(60)) == [] && s.nextDeadline == nil)
        var lost = sync(.pollToken)
        _ = lost.outputs(after: .start, now: t0)
        #expect(lost.outputs(after: .failed(StoreError(.permissionFailure, "removed")), now: t0).count == 1)
    }
}
