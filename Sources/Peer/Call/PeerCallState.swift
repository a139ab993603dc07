// Where a call is, as one value that owns what exists there: each phase holds its transports (the
// current epoch's, and those an ICE restart retired whose TURN deallocations are still on their
// way), the deadlines the call is held to, and — once hung up — the ending. Nothing beside it in
// `PeerCall` says any of this a second time. The deadlines are the call's own decisions
// (`CallLifetime`), taken the same way in the real runner and in the simulator.
//
//   idle → joining → negotiating → connected ⇄ restarting
//                         ↓             ↓           ↓
//                         └────────→ closing → closed
//
// Noncopyable: the call has one owner, and the transports it holds are fed where they lie.

import ICE
import Signaling
import ZoneCore

/// The course of one peer's call, and what each stage of it holds.
enum PeerCallState: ~Copyable {
    /// Made, not started.
    case idle
    /// Started, no epoch yet: the session record is being ensured, the first offer made or
    /// awaited. `connectBy`: fail unless a pair is selected by then.
    case joining(connectBy: Instant?)
    /// Negotiating the current epoch (descriptions and candidates through the store, ICE checks);
    /// no pair was ever selected.
    case negotiating(Negotiating)
    /// A pair was selected: media flows on it (a renegotiation that restarted ICE keeps the call
    /// here until the new epoch selects one).
    case connected(Connected)
    /// The path of a connected call failed (every pair failed, or consent expired, RFC 7675 §5.1):
    /// an ICE restart runs in a new epoch.
    case restarting(Restarting)
    /// Hung up: the goodbye is in the store requests the call asked for, and every transport it
    /// had is fed until its deallocations are answered or time out.
    case closing(Closing)
    /// Hung up, and nothing is left to drain: the end a driver waits for (with the store requests
    /// it was asked for).
    case closed(PeerCall.Ending)

    /// The transports of a call that has not hung up.
    struct Transports: ~Copyable {
        /// The current epoch's.
        var current: EpochTransport
        /// Those ICE restarts replaced, closed, fed until drained.
        var retiring: [RetiringTransport] = []
    }

    /// A closed transport and the latest instant it is fed until (its deallocations have their own
    /// timeouts; this bounds a server that keeps challenging them).
    struct RetiringTransport {
        let transport: EpochTransport
        let holdUntil: Instant

        /// Keeps `transport`, closed or about to be, until drained or `now` + its bound.
        init(_ transport: EpochTransport, now: Instant) {
            self.transport = transport
            holdUntil = now + transport.closingBound
        }

        /// Whether nothing is left to feed it: deallocations answered or timed out, or the bound passed.
        func isDrained(now: Instant) -> Bool {
            transport.nextDeadline == nil || holdUntil <= now
        }
    }

    struct Negotiating: ~Copyable {
        var transports: Transports
        let connectBy: Instant?
    }

    struct Connected: ~Copyable {
        var transports: Transports
        /// Hang up then (`CallLifetime.holdAfterConnect`, from the first pair selected).
        let holdUntil: Instant?
        /// Fail unless the media is done by then (`CallLifetime.mediaTimeout`); nil without a
        /// timeout, and once the media is done.
        var mediaDueBy: Instant?
        /// The remote hung up while our media was still going: the media may finish what already
        /// arrived until then.
        var remoteGoodbye: RemoteGoodbye?
        /// ICE restarts tried since the call first connected.
        let restartsTried: Int
        /// Whether a refused send was reported since the pair was selected (`Event.sendFailed`).
        var sendFailureReported = false
    }

    struct Restarting: ~Copyable {
        var transports: Transports
        /// The restart this is (1 for the first since the call connected).
        let attempt: Int
        /// End `remote unreachable` unless the new epoch selects a pair by then.
        let reconnectBy: Instant
        let holdUntil: Instant?
        var mediaDueBy: Instant?
    }

    struct Closing: ~Copyable {
        let ending: PeerCall.Ending
        /// Every transport the call had, closed, fed until drained.
        var transports: [RetiringTransport]
    }

    /// The remote's goodbye, read in the zone while our media was still going.
    struct RemoteGoodbye {
        let why: String
        let settleBy: Instant
    }

    // MARK: Reading

    var isIdle: Bool {
        switch self {
        case .idle: true
        default: false
        }
    }

    var isConnected: Bool {
        switch self {
        case .connected: true
        default: false
        }
    }

    /// One of the call's own deadlines that has come.
    enum Due {
        /// No pair was selected in time (`CallLifetime.connectTimeout`).
        case connect
        /// The remote's goodbye was given its time to settle.
        case remoteGoodbye(String)
        /// The media did not end in time (`CallLifetime.mediaTimeout`).
        case media
        /// The call was held for its time (`CallLifetime.holdAfterConnect`).
        case hold
        /// Restart number `attempt` found no path in time (`CallLifetime.reconnectTimeout`).
        case reconnect(attempt: Int)
    }

    /// The first of the call's deadlines that has come by `now`, if one has.
    func due(now: Instant) -> Due? {
        switch self {
        case .joining(let connectBy):
            guard let connectBy, connectBy <= now else { return nil }
            return .connect
        case .negotiating(let n):
            guard let connectBy = n.connectBy, connectBy <= now else { return nil }
            return .connect
        case .connected(let c):
            if let goodbye = c.remoteGoodbye, goodbye.settleBy <= now { return .remoteGoodbye(goodbye.why) }
            if let due = c.mediaDueBy, due <= now { return .media }
            if let holdUntil = c.holdUntil, holdUntil <= now { return .hold }
            return nil
        case .restarting(let r):
            if let due = r.mediaDueBy, due <= now { return .media }
            if let holdUntil = r.holdUntil, holdUntil <= now { return .hold }
            guard r.reconnectBy <= now else { return nil }
            return .reconnect(attempt: r.attempt)
        default:
            return nil
        }
    }

    /// Whether the remote's goodbye is settling (connected, our media still going).
    var isSettlingGoodbye: Bool {
        switch self {
        case .connected(let c): c.remoteGoodbye != nil
        default: false
        }
    }

    /// How the call ended, once it has hung up.
    var ending: PeerCall.Ending? {
        switch self {
        case .closing(let closing): closing.ending
        case .closed(let ending): ending
        default: nil
        }
    }

    /// The current epoch's transport, until the call hangs up.
    var current: EpochTransport? {
        switch self {
        case .negotiating(let n): n.transports.current
        case .connected(let c): c.transports.current
        case .restarting(let r): r.transports.current
        default: nil
        }
    }

    /// Whether transports are draining beside the current one (or, closing, at all).
    var isDraining: Bool {
        switch self {
        case .negotiating(let n): !n.transports.retiring.isEmpty
        case .connected(let c): !c.transports.retiring.isEmpty
        case .restarting(let r): !r.transports.retiring.isEmpty
        case .closing: true
        default: false
        }
    }

    /// The instant the call itself must act at (connect, hold, media, goodbye or reconnect deadline).
    var deadline: Instant? {
        switch self {
        case .joining(let connectBy): connectBy
        case .negotiating(let n): n.connectBy
        case .connected(let c):
            .earliest(.earliest(c.holdUntil, c.mediaDueBy), c.remoteGoodbye?.settleBy)
        case .restarting(let r): .earliest(.earliest(r.reconnectBy, r.holdUntil), r.mediaDueBy)
        default: nil
        }
    }

    /// Calls `body` with every transport the call feeds: retiring ones first, then the current
    /// one; closing, every one it had.
    func forEachTransport(_ body: (EpochTransport) -> Void) {
        switch self {
        case .negotiating(let n): n.transports.forEach(body)
        case .connected(let c): c.transports.forEach(body)
        case .restarting(let r): r.transports.forEach(body)
        case .closing(let closing): for t in closing.transports { body(t.transport) }
        default: break
        }
    }

    /// The earliest deadline of the transports, each bounded by its hold.
    var transportDeadline: Instant? {
        var next: Instant?
        switch self {
        case .negotiating(let n): next = n.transports.deadline
        case .connected(let c): next = c.transports.deadline
        case .restarting(let r): next = r.transports.deadline
        case .closing(let closing): for t in closing.transports { next = .earliest(next, t.deadline) }
        default: break
        }
        return next
    }

    /// The transport a datagram is for: a draining one whose TURN request it answers, else the
    /// current one. Nil before the first epoch and once the call hung up, unless it answers a
    /// closing transport's deallocation.
    func transport(for bytes: [UInt8], from: Endpoint, to: Endpoint) -> EpochTransport? {
        switch self {
        case .negotiating(let n): n.transports.receiver(of: bytes, from: from, to: to)
        case .connected(let c): c.transports.receiver(of: bytes, from: from, to: to)
        case .restarting(let r): r.transports.receiver(of: bytes, from: from, to: to)
        case .closing(let closing):
            (closing.transports.first { $0.transport.awaitsResponse(bytes, from: from, to: to) }
                ?? closing.transports.first { $0.transport.relaySocket == to })?.transport
        default: nil
        }
    }

    /// The next output of a transport: retiring ones first, then the current one.
    func pollTransports() -> (ICETransport.Output, EpochTransport)? {
        switch self {
        case .negotiating(let n): return n.transports.poll()
        case .connected(let c): return c.transports.poll()
        case .restarting(let r): return r.transports.poll()
        case .closing(let closing):
            for t in closing.transports {
                if let output = t.transport.pollOutput() { return (output, t.transport) }
            }
            return nil
        default: return nil
        }
    }

    // MARK: Changing

    /// Hangs up: closing from now on, with every transport of the call (the current one too).
    mutating func hangUp(_ ending: PeerCall.Ending, now: Instant) {
        let transports: [RetiringTransport]
        switch consume self {
        case .negotiating(let n): transports = n.transports.all(now: now)
        case .connected(let c): transports = c.transports.all(now: now)
        case .restarting(let r): transports = r.transports.all(now: now)
        case .closing(let closing): transports = closing.transports
        default: transports = []
        }
        self = .closing(Closing(ending: ending, transports: transports))
    }

    /// The current epoch's transport selected a pair: connected from now on — with `holdUntil` and
    /// `mediaDueBy` when this is the first connection, with what a restart carried otherwise.
    mutating func pairSelected(holdUntil: Instant?, mediaDueBy: Instant?) {
        switch consume self {
        case .negotiating(let n):
            self = .connected(Connected(transports: n.transports, holdUntil: holdUntil, mediaDueBy: mediaDueBy,
                                        restartsTried: 0))
        case .connected(var c):
            c.sendFailureReported = false
            self = .connected(c)
        case .restarting(let r):
            let (holdUntil, mediaDueBy, attempt) = (r.holdUntil, r.mediaDueBy, r.attempt)
            self = .connected(Connected(transports: r.transports, holdUntil: holdUntil, mediaDueBy: mediaDueBy,
                                        restartsTried: attempt))
        case let other:
            self = other
        }
    }

    /// A new epoch's transport replaces the current one, which is closed and drained beside it.
    /// Returns how many datagrams held for the old one's pair were dropped.
    mutating func replaceCurrent(with fresh: EpochTransport, now: Instant) -> Int {
        var dropped = 0
        switch consume self {
        case .joining(let connectBy):
            self = .negotiating(Negotiating(transports: Transports(current: fresh), connectBy: connectBy))
        case .negotiating(var n):
            dropped = n.transports.replace(with: fresh, now: now)
            self = .negotiating(n)
        case .connected(var c):
            dropped = c.transports.replace(with: fresh, now: now)
            self = .connected(c)
        case .restarting(var r):
            dropped = r.transports.replace(with: fresh, now: now)
            self = .restarting(r)
        case let other:
            self = other  // idle, or hung up: no new transport
        }
        return dropped
    }

    /// Lets go of the transports that are drained, and ends closing once every one is.
    mutating func dropDrained(now: Instant, _ gone: (EpochTransport) -> Void) {
        guard isDraining else { return }
        switch consume self {
        case .negotiating(var n):
            n.transports.dropDrained(now: now, gone)
            self = .negotiating(n)
        case .connected(var c):
            c.transports.dropDrained(now: now, gone)
            self = .connected(c)
        case .restarting(var r):
            r.transports.dropDrained(now: now, gone)
            self = .restarting(r)
        case .closing(var closing):
            closing.transports.removeAll { t in
                guard t.isDrained(now: now) else { return false }
                gone(t.transport)
                return true
            }
            self = closing.transports.isEmpty ? .closed(closing.ending) : .closing(closing)
        case let other:
            self = other
        }
    }

    /// What a failed path leads to.
    enum PathFailure {
        /// The call was not connected: the connect timeout governs.
        case notConnected
        /// The remote said goodbye: no reconnecting to it.
        case remoteGoodbye(String)
        /// No restart left: `tried` were.
        case exhausted(tried: Int)
        /// Restart number `attempt` runs.
        case restarting(attempt: Int)
    }

    /// The path of the call failed at `now`: restarting, unless the remote said goodbye or no
    /// restart is left (`attempts` at most), in which case nothing changes here.
    mutating func pathFailed(now: Instant, reconnectTimeout: Duration, attempts: Int) -> PathFailure {
        switch consume self {
        case .connected(let c):
            let (tried, holdUntil, mediaDueBy) = (c.restartsTried, c.holdUntil, c.mediaDueBy)
            if let goodbye = c.remoteGoodbye {
                self = .connected(c)
                return .remoteGoodbye(goodbye.why)
            }
            guard tried < attempts else {
                self = .connected(c)
                return .exhausted(tried: tried)
            }
            self = .restarting(Restarting(transports: c.transports, attempt: tried + 1,
                                          reconnectBy: now + reconnectTimeout, holdUntil: holdUntil,
                                          mediaDueBy: mediaDueBy))
            return .restarting(attempt: tried + 1)
        case .restarting(let r):
            let (tried, reconnectBy, holdUntil, mediaDueBy) = (r.attempt, r.reconnectBy, r.holdUntil, r.mediaDueBy)
            guard tried < attempts else {
                self = .restarting(r)
                return .exhausted(tried: tried)
            }
            self = .restarting(Restarting(transports: r.transports, attempt: tried + 1, reconnectBy: reconnectBy,
                                          holdUntil: holdUntil, mediaDueBy: mediaDueBy))
            return .restarting(attempt: tried + 1)
        case let other:
            self = other
            return .notConnected
        }
    }

    /// The media is done: no media deadline any more.
    mutating func mediaDone() {
        switch consume self {
        case .connected(var c):
            c.mediaDueBy = nil
            self = .connected(c)
        case .restarting(var r):
            r.mediaDueBy = nil
            self = .restarting(r)
        case let other:
            self = other
        }
    }

    /// Notes a refused send on the selected pair; true the first time since it was selected.
    mutating func firstSendFailure() -> Bool {
        switch consume self {
        case .connected(var c):
            let first = !c.sendFailureReported
            c.sendFailureReported = true
            self = .connected(c)
            return first
        case let other:
            self = other
            return false
        }
    }

    /// The remote hung up while media flows: it may settle until `settleBy`. False when the call
    /// is not connected (nothing can settle) or a goodbye is settling already.
    mutating func settle(goodbye: RemoteGoodbye) -> Bool {
        switch consume self {
        case .connected(var c):
            let first = c.remoteGoodbye == nil
            if first { c.remoteGoodbye = goodbye }
            self = .connected(c)
            return first
        case let other:
            self = other
            return false
        }
    }
}

extension PeerCallState.Transports {
    func forEach(_ body: (EpochTransport) -> Void) {
        for t in retiring { body(t.transport) }
        body(current)
    }

    var deadline: Instant? {
        var next = current.nextDeadline
        for t in retiring { next = .earliest(next, t.deadline) }
        return next
    }

    func receiver(of bytes: [UInt8], from: Endpoint, to: Endpoint) -> EpochTransport {
        guard !retiring.isEmpty else { return current }
        if let t = retiring.first(where: { $0.transport.awaitsResponse(bytes, from: from, to: to) }) {
            return t.transport
        }
        // A retired epoch's relay socket of its own (a group call's leg): what its server still sends is its.
        if current.relaySocket != to, let t = retiring.first(where: { $0.transport.relaySocket == to }) {
            return t.transport
        }
        return current
    }

    func poll() -> (ICETransport.Output, EpochTransport)? {
        for t in retiring {
            if let output = t.transport.pollOutput() { return (output, t.transport) }
        }
        return current.pollOutput().map { ($0, current) }
    }

    func all(now: Instant) -> [PeerCallState.RetiringTransport] {
        retiring + [PeerCallState.RetiringTransport(current, now: now)]
    }

    /// Closes the current transport and keeps it draining beside `fresh`; returns how many
    /// datagrams held for its pair were dropped.
    mutating func replace(with fresh: EpochTransport, now: Instant) -> Int {
        let dropped = current.close(now: now)
        retiring.append(PeerCallState.RetiringTransport(current, now: now))
        current = fresh
        return dropped
    }

    mutating func dropDrained(now: Instant, _ gone: (EpochTransport) -> Void) {
        retiring.removeAll { t in
            guard t.isDrained(now: now) else { return false }
            gone(t.transport)
            return true
        }
    }
}

extension PeerCallState.RetiringTransport {
    /// Its next deadline, at the latest its hold.
    var deadline: Instant? { transport.nextDeadline.map { min($0, holdUntil) } }
}

extension PeerCall {
    /// How a call ended.
    public enum Ending: Sendable, Equatable {
        /// Hung up as planned: by the user, after its media, or after its hold time.
        case completed
        /// Hung up because it could not go on; the reason is for the user.
        case failed(String)
    }

    /// Where a call is, without what the stage holds: for drivers, tests and reports.
    public enum Phase: Sendable, Equatable {
        case idle, joining, negotiating, connected, restarting
        /// Hung up, draining its transports.
        case closing(Ending)
        /// Hung up and drained.
        case closed(Ending)
    }
}
