// One outstanding TURN request: RFC 8489 §6.3 (responses match requests by transaction ID); its
// retransmission is STUN's one client transaction (§6.2.1: resend after RTO, doubling; give up
// Rm × RTO after the last of Rc sends). A request answered with 401 or 438 is sent again as a new
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

/// An outstanding request: what it asks, and its STUN client transaction (the retransmission
/// schedule; its outputs are what to send and when the request has timed out).
struct TURNTransaction {
    let kind: TURNRequestKind
    /// The request without credentials; re-signed for each new transaction after a challenge.
    private(set) var request: STUNMessage
    private(set) var signed: Bool
    /// 401/438 challenges answered so far for this request.
    private(set) var challenges = 0
    var transaction: STUNClientTransaction

    var transactionID: STUNTransactionID { request.transactionID }

    init(kind: TURNRequestKind, request: STUNMessage, bytes: [UInt8], signed: Bool, now: Instant,
         timing: STUNTransactionTiming) {
        self.kind = kind
        self.request = request
        self.signed = signed
        transaction = STUNClientTransaction(request: bytes, timing: timing, now: now)
    }

    /// The same request as a new transaction (new ID, new bytes, the schedule from the start),
    /// after a challenge.
    mutating func reissue(id: STUNTransactionID, bytes: [UInt8], signed: Bool, now: Instant) {
        request.transactionID = id
        self.signed = signed
        challenges += 1
        transaction = STUNClientTransaction(request: bytes, timing: transaction.timing, now: now)
    }
}
