// One outstanding TURN request and its retransmission schedule: RFC 8489 §6.2.1 (UDP: resend
// after RTO, doubling; give up Rm × RTO after the last of Rc sends) and §6.3 (responses match
// requests by transaction ID). A request answered with 401 or 438 is sent again as a new
// transaction with fresh credentials (RFC 8489 §9.2.5), so the unsigned message is kept.

import STUN
import ZoneCore

/// What a request is for, and so what its response means.
enum TURNRequestKind: Hashable {
    /// Allocate (RFC 8656 §7).
    case allocate
    /// Refresh (RFC 8656 §8); lifetime 0 deletes the allocation.
    case refresh(lifetime: UInt32?)
    /// CreatePermission for one peer IP (RFC 8656 §9); `peer` is the address sent in XOR-PEER-ADDRESS.
    case createPermission(IPAddress, peer: Endpoint)
    /// ChannelBind of `channel` to `peer` (RFC 8656 §12).
    case channelBind(channel: UInt16, peer: Endpoint)

    var method: STUNMethod {
        switch self {
        case .allocate: .allocate
        case .refresh: .refresh
        case .createPermission: .createPermission
        case .channelBind: .channelBind
        }
    }

    /// The peer a request is about, for failure events.
    var peer: Endpoint? {
        switch self {
        case .allocate, .refresh: nil
        case .createPermission(_, let peer), .channelBind(_, let peer): peer
        }
    }
}

/// The outcome of a transaction's timer.
enum TURNTimerOutcome {
    case wait
    case retransmit
    case timedOut
}

/// An outstanding request.
struct TURNTransaction {
    let kind: TURNRequestKind
    /// The request without credentials; re-signed for each new transaction after a challenge.
    private(set) var request: STUNMessage
    private(set) var bytes: [UInt8]
    private(set) var signed: Bool
    /// 401/438 challenges answered so far for this request.
    private(set) var challenges = 0
    private(set) var deadline: Instant
    private var sends = 1
    private var rto: Duration
    private let timing: TURNRequestTiming

    var transactionID: STUNTransactionID { request.transactionID }

    init(kind: TURNRequestKind, request: STUNMessage, bytes: [UInt8], signed: Bool, now: Instant,
         timing: TURNRequestTiming) {
        self.kind = kind
        self.request = request
        self.bytes = bytes
        self.signed = signed
        self.timing = timing
        rto = timing.initialRTO
        deadline = now + TURNTransaction.firstWait(timing)
    }

    /// The wait after the first send: one RTO, or the final wait when nothing is resent.
    private static func firstWait(_ timing: TURNRequestTiming) -> Duration {
        timing.maxRetransmits == 0 ? timing.initialRTO * timing.finalWait : timing.initialRTO
    }

    /// The same request as a new transaction (new ID, new bytes), after a challenge.
    mutating func reissue(id: STUNTransactionID, bytes: [UInt8], signed: Bool, now: Instant) {
        request.transactionID = id
        self.bytes = bytes
        self.signed = signed
        challenges += 1
        sends = 1
        rto = timing.initialRTO
        deadline = now + TURNTransaction.firstWait(timing)
    }

    /// Advances the schedule to `now`.
    mutating func onTimer(now: Instant) -> TURNTimerOutcome {
        guard now >= deadline else { return .wait }
        if sends > timing.maxRetransmits { return .timedOut }
        sends += 1
        if sends > timing.maxRetransmits {
            deadline = now + timing.initialRTO * timing.finalWait
        } else {
            rto = min(rto * 2, timing.maxRTO)
            deadline = now + rto
        }
        return .retransmit
    }
}
