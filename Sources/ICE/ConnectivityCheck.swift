// A STUN transaction the agent runs: a connectivity check (RFC 8445 §7.2.2, §7.2.4), a consent
// check (RFC 7675 §5.1) or a Binding to a STUN server for a server-reflexive candidate
// (RFC 8445 §5.1.1.2). Retransmission is the STUN module's `STUNClientTransaction` (RFC 8489
// §6.2.1) with the agent's knobs; RFC 8445 §14.3 lets the RTO for checks be set from the pacing
// and the number of pairs; on loopback and in the simulator a fixed, configurable initial RTO is
// what matters.

import STUN
import ZoneCore

/// What a transaction is for, and what its response means.
enum TransactionPurpose: Hashable {
    /// A connectivity check on pair `pairID` of the checklist.
    case check(pairID: Int, useCandidate: Bool, roleWhenSent: Role)
    /// A consent-freshness check on the selected pair (RFC 7675).
    case consent
    /// A Binding to the STUN server `server` from the host candidate `base`.
    case serverReflexive(server: Endpoint, base: Endpoint)
}

/// One outstanding request: what it is for, where it goes, and its STUN client transaction
/// (the retransmission schedule, RFC 8489 §6.2.1).
struct ConnectivityCheck {
    let transactionID: STUNTransactionID
    let purpose: TransactionPurpose
    let from: Endpoint
    let to: Endpoint
    /// The key that must sign the response (the remote password), nil for a STUN server.
    let responseKey: STUNIntegrityKey?
    /// When to send again or give up; its first output is the first send.
    var transaction: STUNClientTransaction

    init(transactionID: STUNTransactionID, purpose: TransactionPurpose, bytes: [UInt8], from: Endpoint,
         to: Endpoint, responseKey: STUNIntegrityKey?, now: Instant, timing: STUNTransactionTiming) {
        self.transactionID = transactionID
        self.purpose = purpose
        self.from = from
        self.to = to
        self.responseKey = responseKey
        transaction = STUNClientTransaction(request: bytes, timing: timing, now: now)
    }

    /// Cancelled (RFC 8445 §7.3.1.4): not retransmitted, and its timeout fails nothing, but a
    /// response still counts.
    var isCancelled: Bool { transaction.isCancelled }

    /// True for a connectivity check on `pairID`.
    func isCheck(pairID: Int) -> Bool {
        if case .check(pairID, _, _) = purpose { true } else { false }
    }

    /// The Binding request of a connectivity check (RFC 8445 §7.1): USERNAME "remote:local",
    /// PRIORITY (of the peer-reflexive candidate this check could create), ICE-CONTROLLING or
    /// ICE-CONTROLLED with our tie-breaker, USE-CANDIDATE when nominating; MESSAGE-INTEGRITY with
    /// the remote password and FINGERPRINT are added when encoding.
    /// `username` is "remote ufrag:local ufrag", which the agent makes once per credentials.
    static func request(
        transactionID: STUNTransactionID, username: String, priority: UInt32, role: Role, tieBreaker: UInt64,
        useCandidate: Bool
    ) -> STUNMessage {
        var attributes: [STUNAttribute] = [
            .username(username),
            .priority(priority),
            role == .controlling ? .iceControlling(tieBreaker: tieBreaker) : .iceControlled(tieBreaker: tieBreaker),
        ]
        if useCandidate { attributes.append(.useCandidate) }
        return STUNMessage(method: .binding, messageClass: .request, transactionID: transactionID,
                           attributes: attributes)
    }
}
