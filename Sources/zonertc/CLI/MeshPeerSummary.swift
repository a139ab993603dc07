import Foundation
import Peer
import PeerNet
import Signaling
import ZoneCore

/// The end-of-call summary of `zonertc peer` in a room's group call: one entry per leg, the room's
/// store requests and counters, as text or as one JSON object.
struct MeshPeerSummary: Codable {
    /// Always true: tells this summary from a call of two's.
    var mesh = true
    var me: String
    var room: String
    var sync: String
    /// `completed`, `failed` or `interrupted`.
    var outcome: String
    var reason: String?
    var mediaSecurity: String?
    /// Members the call was for (`--peers`), and how long after joining a frame had come from each.
    var expectedMembers: Int?
    var allPairsMs: Double?
    /// Wall-clock instant (ms since 1970) of joining, to line up several peers.
    var startedAtMs: Int64?
    /// Wall-clock instant (ms since 1970) the command began, before the store was opened and the room set up.
    var launchedAtMs: Int64?
    /// Where the way from the command's start to joining went.
    var startup: Startup?
    /// What this process's CPU (user and system, every thread) was spent on around joining.
    var cpu: CPU?
    var leftReason: String?
    var requests: CallSignaling.RequestCounts?
    var storeRequests: Int?
    var recordsFetched: Int?
    var kilobytesFetched: Double?
    var resets: Int?
    var throttled: Int?
    var roomCounters: RoomSignaling.Counters?
    var unroutedDatagrams: Int?
    var pushUnavailable: String?
    var goodbyeTimedOut: Bool?
    var legs: [Leg] = []

    /// Milliseconds from the command's start to each step before joining, in the order they are taken:
    /// the store opened (a daemon's client made), the room set up (§1 of docs/PROTOCOL.md: share, member
    /// record, subscription), the video file read, the sockets bound, the DTLS certificate ready (its
    /// generation runs beside the steps before). Joining follows (`startedAtMs`).
    struct Startup: Codable {
        var storeOpened: Double?
        var roomReady: Double?
        var mediaRead: Double?
        var socketsBound: Double?
        var securityReady: Double?
        /// The command's start (not written: `launchedAtMs` is).
        private var origin = Instant.zero

        init(since start: Instant) { origin = start }

        private enum CodingKeys: String, CodingKey {
            case storeOpened, roomReady, mediaRead, socketsBound, securityReady
        }

        /// Notes that the step `key` is done now.
        mutating func mark(_ key: WritableKeyPath<Startup, Double?>) {
            self[keyPath: key] = Double((WallClock().now() - origin).nanoseconds) / 1e6
        }
    }

    /// Process CPU time in milliseconds: before joining (starting, preparing: `--join-at`), and from joining
    /// until a frame had come from every other member — the window the time to all pairs measures. On a
    /// shared machine the second, summed over the members, says what the window cannot be shorter than
    /// (it divided by the cores), whatever the load (docs/BENCHMARKS.md, group calls).
    struct CPU: Codable {
        var beforeJoinMs: Double
        var toAllPairsMs: Double?
    }

    /// One leg: the pair with `remote`.
    struct Leg: Codable {
        var remote: String
        var generation: Int
        /// `completed`, `failed` or `up` (not ended when the summary was made).
        var outcome: String
        var reason: String?
        /// Why the room ended the leg, as a sentence.
        var ended: String?
        var iceConnectedMs: Double?
        var firstFrameMs: Double?
        /// The leg's timeline from our joining: started, both descriptions set, ICE connected, first
        /// frame (the breakdown of the time to all pairs).
        var sinceJoin: Timeline?
        var path: String?
        var storeRequests: Int
        var malformedRecords: Int
        var media: CallMediaStats
        /// What the leg dropped, by where (as a call of two's summary gives it).
        var drops: CallDrops?
    }

    /// Milliseconds from joining the room to each milestone of a leg.
    struct Timeline: Codable {
        var started: Double?
        var signaled: Double?
        var connected: Double?
        var firstFrame: Double?
    }

    init(me: String, room: String, sync: String, outcome: RoomRunner.Outcome, snapshot: RoomCallSnapshot?,
         expected: Int?, runner: RoomRunner.Report? = nil) {
        self.me = me
        self.room = room
        self.sync = sync
        expectedMembers = expected
        switch outcome {
        case .completed: self.outcome = "completed"
        case .failed(let why): self.outcome = "failed"; reason = why
        case .interrupted: self.outcome = "interrupted"
        }
        guard let s = snapshot else { return }
        startedAtMs = s.startedAt?.millisecondsSinceEpoch
        leftReason = s.leftReason?.description
        requests = s.requests
        storeRequests = s.requests.total
        recordsFetched = s.sync.recordsFetched
        kilobytesFetched = Double(s.sync.bytesFetched) / 1000
        resets = s.sync.tokenResets
        throttled = s.sync.throttled
        roomCounters = s.counters
        unroutedDatagrams = s.unroutedDatagrams
        pushUnavailable = runner?.pushUnavailable
        goodbyeTimedOut = runner?.goodbyeTimedOut
        let remotes = Set(s.legs.map(\.id.remote))
        if let expected, remotes.count >= expected - 1 {
            allPairsMs = s.timeToAllPairs(remotes).map(Self.milliseconds)
        }
        legs = s.legs.map { leg in
            let m = leg.snapshot.milestones
            let fromJoin = { (instant: Instant?) in
                s.startedAt.flatMap { join in instant.map { Self.milliseconds($0 - join) } }
            }
            let timeline = Timeline(started: fromJoin(m.started), signaled: fromJoin(m.signalingComplete),
                                    connected: fromJoin(m.iceConnected), firstFrame: fromJoin(m.firstFrame))
            let outcome: String
            var reason: String?
            switch leg.ending {
            case .completed: outcome = "completed"
            case .failed(let why): outcome = "failed"; reason = why
            case nil: outcome = "up"
            }
            return Leg(remote: leg.id.remote, generation: leg.id.generation, outcome: outcome, reason: reason,
                       ended: leg.endReason?.sentence(remote: leg.id.remote),
                       iceConnectedMs: m.milliseconds(to: m.iceConnected),
                       firstFrameMs: m.milliseconds(to: m.firstFrame), sinceJoin: timeline,
                       path: leg.snapshot.pathKind,
                       storeRequests: leg.snapshot.signaling.requests.total,
                       malformedRecords: leg.snapshot.signaling.malformedRecords, media: leg.snapshot.media,
                       drops: leg.snapshot.drops)
        }
        if case .roomFull = s.leftReason, self.outcome == "completed" {
            self.outcome = "failed"
            reason = s.leftReason?.description
        }
    }

    static func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
    }

    /// The summary a `zonertc peer --json` group-call child printed last, if it printed one.
    init?(lastLineOf output: String) {
        guard let line = output.split(separator: "\n").last,
              let summary = try? JSONDecoder().decode(MeshPeerSummary.self, from: Data(line.utf8)), summary.mesh
        else { return nil }
        self = summary
    }

    var text: String {
        var lines = ["group call \(room): \(me) (\(sync)) \(outcome)" + (reason.map { ": \($0)" } ?? "")]
        if let leftReason { lines.append("  left                \(leftReason)") }
        if let allPairsMs { lines.append("  all pairs           \(PeerSummary.ms(allPairsMs)) (a frame from every member)") }
        if let requests {
            lines.append("  store               \(requests.total) requests (\(requests.fetches) fetches, \(requests.saves) "
                         + "saves, \(requests.deletes) deletes, \(requests.lookups) lookups), \(recordsFetched ?? 0) "
                         + "records fetched, \(resets ?? 0) resets, \(throttled ?? 0) throttled")
        }
        if let r = roomCounters {
            lines.append("  room                \(r.legsStarted) legs started, \(r.fallbackOffers) fallback offers, "
                         + "\(r.unanswered) unanswered, \(r.memberRecordsRefused) member records refused, "
                         + "\(r.beyondLimit) beyond the limit, \(r.forgedRecords) forged records, "
                         + "\(r.callersAnswered) offers from non-members answered")
        }
        for leg in legs {
            var line = "  \(me) ↔ \(leg.remote)".padding(toLength: 22, withPad: " ", startingAt: 0)
            line += leg.outcome + (leg.reason.map { ": \($0)" } ?? "")
            line += "; first frame \(PeerSummary.ms(leg.firstFrameMs)); "
            line += "sent \(leg.media.framesSent), received \(leg.media.framesReceived)"
            if let ended = leg.ended { line += "; \(ended)" }
            if let drops = leg.drops, drops.total > 0 { line += "; dropped \(drops.text)" }
            lines.append(line)
        }
        if let unroutedDatagrams, unroutedDatagrams > 0 { lines.append("  unrouted datagrams  \(unroutedDatagrams)") }
        if let pushUnavailable { lines.append("  push                unavailable (\(pushUnavailable)): polled only") }
        if goodbyeTimedOut == true { lines.append("  goodbye             timed out") }
        return lines.joined(separator: "\n")
    }
}
