// A STUN transaction the agent runs: a connectivity check (RFC 8445 §7.2.2, §7.2.4), a consent
// check (RFC 7675 §5.1) or a Binding to a STUN server for a server-reflexive candidate
// (RFC 8445 §5.1.1.2). Retransmission follows RFC 8489 §6.2.1 with the agent's knobs: the request
// is resent after RTO, 2×RTO, 4×RTO… (capped at `maxRTO`), `maxRetransmits` times, and the
// transaction times out one more interval after the last retransmission. RFC 8445 §14.3 lets the
// RTO for checks be set from the pacing and the number of pairs; on loopback and in the simulator a
// fixed, configurable initial RTO is what matters.

import STUN
import ZoneCore

/// What a transaction is for, and what its response means.
enum TransactionPurpose: Hashable {
    /// A connectivity check on pair `pairID` of the checklist of `generation`.
    case check(pairID: Int, generation: Int, useCandidate: Bool, roleWhenSent: Role)
    /// A consent-freshness check on the selected pair (RFC 7675).
    case consent
    /// A Binding to the STUN server `server` from the host candidate `base`.
    case serverReflexive(server: Endpoint, base: Endpoint)
}

/// The outcome of a transaction's timer.
enum RetransmissionAction: Hashable {
    /// Nothing due yet.
    case wait
    /// Send the request again.
    case retransmit
    /// Give up: no response came.
    case timedOut
}

/// One outstanding request: its bytes, where it goes, and its retransmission schedule.
struct ConnectivityCheck {
    let transactionID: STUNTransactionID
    let purpose: TransactionPurpose
    let bytes: [UInt8]
    let from: Endpoint
    let to: Endpoint
    /// The key that must sign the response (the remote password), nil for a STUN server.
    let responseKey: STUNIntegrityKey?
    /// When the next retransmission (or the timeout) is due.
    private(set) var deadline: Instant
    private(set) var retransmits = 0
    /// Cancelled (RFC 8445 §7.3.1.4): not retransmitted, and its timeout fails nothing, but a
    /// response still counts.
    private(set) var isCancelled = false
    private var rto: Duration
    private let maxRTO: Duration
    private let maxRetransmits: Int

    init(transactionID: STUNTransactionID, purpose: TransactionPurpose, bytes: [UInt8], from: Endpoint,
         to: Endpoint, responseKey: STUNIntegrityKey?, now: Instant, timing: TransactionTiming) {
        self.transactionID = transactionID
        self.purpose = purpose
        self.bytes = bytes
        self.from = from
        self.to = to
        self.responseKey = responseKey
        self.rto = timing.initialRTO
        self.maxRTO = timing.maxRTO
        self.maxRetransmits = timing.maxRetransmits
        self.deadline = now + timing.initialRTO
    }

    /// Advances the schedule to `now`. A cancelled transaction keeps its schedule, silently,
    /// so that it times out when it would have.
    mutating func onTimer(now: Instant) -> RetransmissionAction {
        guard now >= deadline else { return .wait }
        if retransmits >= maxRetransmits { return .timedOut }
        retransmits += 1
        rto = min(rto * 2, maxRTO)
        deadline = now + rto
        return isCancelled ? .wait : .retransmit
    }

    /// Stops retransmitting; the response, if one comes, is still processed.
    mutating func cancel() { isCancelled = true }

    /// True for a connectivity check on `pairID` of `generation`.
    func isCheck(pairID: Int, generation: Int) -> Bool {
        if case .check(pairID, generation, _, _) = purpose { true } else { false }
    }

    /// The Binding request of a connectivity check (RFC 8445 §7.1): USERNAME "remote:local",
    /// PRIORITY (of the peer-reflexive candidate this check could create), ICE-CONTROLLING or
    /// ICE-CONTROLLED with our tie-breaker, USE-CANDIDATE when nominating; MESSAGE-INTEGRITY with
    /// the remote password and FINGERPRINT are added when encoding.
    static func request(
        transactionID: STUNTransactionID, local: Credentials, remote: Credentials, priority: UInt32,
        role: Role, tieBreaker: UInt64, useCandidate: Bool
    ) -> STUNMessage {
        var attributes: [STUNAttribute] = [
            .username(remote.ufrag + ":" + local.ufrag),
            .priority(priority),
            role == .controlling ? .iceControlling(tieBreaker: tieBreaker) : .iceControlled(tieBreaker: tieBreaker),
        ]
        if useCandidate { attributes.append(.useCandidate) }
        return STUNMessage(method: .binding, messageClass: .request, transactionID: transactionID,
                           attributes: attributes)
    }
}

/// Retransmission knobs for a transaction.
public struct TransactionTiming: Hashable, Sendable {
    /// The first retransmission timeout.
    public var initialRTO: Duration
    /// The largest timeout the doubling reaches.
    public var maxRTO: Duration
    /// How many times a request is resent before the transaction times out.
    public var maxRetransmits: Int

    public init(initialRTO: Duration = .milliseconds(100), maxRTO: Duration = .milliseconds(1600),
                maxRetransmits: Int = 7) {
        precondition(initialRTO > .zero && maxRTO >= initialRTO && maxRetransmits >= 0)
        self.initialRTO = initialRTO
        self.maxRTO = maxRTO
        self.maxRetransmits = maxRetransmits
    }
}
