// What a group call's summary is made of, taken out of the machine so it can cross threads.

import Signaling
import ZoneCore

/// A group call's legs, store requests and room counters at one moment.
public struct RoomCallSnapshot: Sendable {
    /// Every leg: those drained, then those still up.
    public var legs: [RoomLegResult]
    /// When the room was joined (`.join`), and when every expected leg's media was done.
    public var startedAt: Instant?
    public var allMediaDoneAt: Instant?
    /// The room's store requests by kind (every leg's included).
    public var requests: CallSignaling.RequestCounts
    /// What the room did: members, legs, fallbacks, forged and other pairs' records.
    public var counters: RoomSignaling.Counters
    /// The change-sync's counters, summed over the ingestion paths.
    public var sync: ChangeSync.Counters
    /// Why we left, once we did.
    public var leftReason: LeaveReason?
    /// Datagrams no leg took.
    public var unroutedDatagrams: Int

    public init(_ call: borrowing RoomCall) {
        legs = call.legResults
        startedAt = call.startedAt
        allMediaDoneAt = call.allMediaDoneAt
        requests = call.room.requests
        counters = call.room.counters
        var sync = ChangeSync.Counters()
        for path in call.room.paths { sync = sync + path.counters }
        self.sync = sync
        if case .left(let reason) = call.room.state { leftReason = reason }
        unroutedDatagrams = call.unroutedDatagrams
    }

    /// How long after joining the first frame came from every one of `remotes`, nil unless it did.
    public func timeToAllPairs(_ remotes: Set<String>) -> Duration? {
        guard let startedAt, !remotes.isEmpty else { return nil }
        var latest: Instant?
        for remote in remotes {
            let firsts = legs.filter { $0.id.remote == remote }.compactMap(\.snapshot.milestones.firstFrame)
            guard let first = firsts.min() else { return nil }
            latest = max(latest ?? first, first)
        }
        return latest.map { $0 - startedAt }
    }
}
