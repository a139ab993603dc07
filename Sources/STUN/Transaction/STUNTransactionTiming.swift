// The retransmission schedule of a STUN request over UDP (RFC 8489 §6.2.1): the request is sent,
// then resent after RTO, 2×RTO, 4×RTO… (the interval doubling up to `maxRTO`) until Rc sends in
// all; the transaction times out Rm × RTO (the initial RTO) after the last one. With the RFC's
// values (RTO 500 ms, Rc 7, Rm 16) sends go out at 0, 0.5, 1.5, 3.5, 7.5, 15.5 and 31.5 s and the
// transaction fails at 39.5 s. The RFC says Rc and Rm SHOULD be configurable; so are they here.

import ZoneCore

/// How a STUN client transaction retransmits and when it gives up.
public struct STUNTransactionTiming: Hashable, Sendable {
    /// The first retransmission timeout (RFC 8489: 500 ms at least on the Internet; ICE lets
    /// checks use less, RFC 8445 §14.3).
    public var initialRTO: Duration
    /// The largest interval the doubling reaches (the RFC sets none; with its values the cap of
    /// 16 s is never reached).
    public var maxRTO: Duration
    /// Sends after the first: Rc − 1 (RFC 8489: Rc = 7).
    public var maxRetransmits: Int
    /// Rm: how many initial RTOs to wait after the last send before timing out (RFC 8489: 16).
    public var finalWait: Int

    /// The largest `maxRetransmits` and `finalWait` accepted: enough for any real schedule, small
    /// enough that no deadline arithmetic can overflow.
    public static let maxCount = 64

    public init(initialRTO: Duration = .milliseconds(500), maxRTO: Duration = .seconds(16), maxRetransmits: Int = 6,
                finalWait: Int = 16) {
        precondition(initialRTO > .zero && maxRTO >= initialRTO && maxRTO <= .seconds(3600),
                     "RTO must be positive, at most the cap, and the cap at most an hour")
        precondition((0...Self.maxCount).contains(maxRetransmits) && (1...Self.maxCount).contains(finalWait),
                     "retransmissions 0…\(Self.maxCount), final wait 1…\(Self.maxCount) RTOs")
        self.initialRTO = initialRTO
        self.maxRTO = maxRTO
        self.maxRetransmits = maxRetransmits
        self.finalWait = finalWait
    }

    /// Rc: the request's sends in all, the first included.
    public var transmissions: Int { maxRetransmits + 1 }

    /// The wait after the last send before the transaction times out: Rm × RTO.
    public var finalInterval: Duration { initialRTO * finalWait }

    /// From the first send to the timeout (RFC 8489 §6.2.1: 39.5 s with the defaults).
    public var timeout: Duration {
        var total = finalInterval
        var rto = initialRTO
        for _ in 0..<maxRetransmits {
            total += rto
            rto = min(rto + rto, maxRTO)
        }
        return total
    }
}
