// One STUN client transaction over UDP (RFC 8489 §6.2.1), the single home of STUN
// retransmission: ICE connectivity and consent checks, server-reflexive gathering and every TURN
// request run one each. The owner builds the request, matches and authenticates responses
// (§6.3: by transaction ID) and reports the match with `.responded`; this machine only decides
// when the request goes out and when the transaction has failed.

import ZoneCore

/// The send schedule of one outstanding request: a sans-I/O machine (`SansIOMachine`).
public struct STUNClientTransaction: SansIOMachine {
    /// Something that happened to the transaction.
    public enum Input: Hashable, Sendable {
        /// `nextDeadline` was reached (calling earlier is harmless).
        case timer
        /// The owner matched a response to the request: the transaction is over.
        case responded
        /// Stop resending but keep the schedule, so the transaction still times out when it
        /// would have (RFC 8445 §7.3.1.4 cancels an in-progress check this way: a late
        /// response still counts).
        case cancel
    }

    /// Something the transaction wants done or reported.
    public enum Output: Hashable, Sendable {
        /// Send the request, for the first time or again.
        case transmit([UInt8])
        /// No response came within the schedule: the transaction failed (sent once, at the end).
        case timedOut
    }

    /// Where the transaction stands.
    public enum Phase: Hashable, Sendable {
        /// Waiting for a response; the next send, or the timeout, is due at `deadline`.
        case waiting(deadline: Instant)
        /// A response came.
        case responded
        /// Rc sends and the final wait passed without a response.
        case timedOut
    }

    /// The encoded request, sent as is every time.
    public let request: [UInt8]
    public let timing: STUNTransactionTiming
    public private(set) var phase: Phase
    /// Sends so far, the first included (cancelled ones too: they keep the schedule).
    public private(set) var transmissions = 1
    /// True once cancelled: nothing more is sent.
    public private(set) var isCancelled = false
    /// The interval before the next retransmission.
    private var rto: Duration
    /// The outputs not yet polled, as counts rather than a queue: every send carries the same
    /// `request`, and the timeout comes last and once (no send follows it), so sends due and
    /// whether the timeout is due say the whole queue, in order, and need no storage of their own.
    private var sendsDue = 0
    private var timeoutDue = false

    /// Starts the transaction at `now`: the first send is the first output.
    public init(request: [UInt8], timing: STUNTransactionTiming, now: Instant) {
        self.request = request
        self.timing = timing
        rto = timing.initialRTO
        phase = .waiting(deadline: now)
        sendsDue = 1
        phase = .waiting(deadline: now + interval(afterSend: 1))
    }

    public mutating func handle(_ input: Input, now: Instant) {
        guard case .waiting(let deadline) = phase else { return }
        switch input {
        case .responded:
            phase = .responded
        case .cancel:
            isCancelled = true
        case .timer:
            guard now >= deadline else { return }
            guard transmissions < timing.transmissions else {
                phase = .timedOut
                timeoutDue = true
                return
            }
            transmissions += 1
            if !isCancelled { sendsDue += 1 }
            phase = .waiting(deadline: now + interval(afterSend: transmissions))
        }
    }

    public mutating func pollOutput() -> Output? {
        if sendsDue > 0 {
            sendsDue -= 1
            return .transmit(request)
        }
        if timeoutDue {
            timeoutDue = false
            return .timedOut
        }
        return nil
    }

    public var nextDeadline: Instant? {
        if case .waiting(let deadline) = phase { deadline } else { nil }
    }

    /// The wait after send number `send`: the current RTO, doubled for the next time (up to the
    /// cap), or Rm × RTO after the last send.
    private mutating func interval(afterSend send: Int) -> Duration {
        if send >= timing.transmissions { return timing.finalInterval }
        defer { rto = min(rto + rto, timing.maxRTO) }
        return rto
    }
}
