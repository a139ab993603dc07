// Deciding which lost packets to ask for again (RFC 4585 §6.2.1 generic NACK, §3.5 on timing;
// RFC 4588 §1 on when retransmission is worth it). Every sequence number skipped by an arriving
// packet is "missing"; each is NACKed, then re-NACKed once per resend interval (the RTT, but no
// less than a floor) until it arrives or its retry budget is spent. A packet given up on, or the
// older part of a gap larger than the tracking limit, asks for a keyframe with a PLI
// (RFC 4585 §6.3.1) instead; the newest part of such a gap is still NACKed.

import ZoneCore

/// The NACK generator's knobs.
public struct NackConfiguration: Equatable, Sendable {
    /// How many NACKs a missing packet gets before the receiver gives up on it.
    public var maxRetries: Int
    /// The least time between two NACKs of one packet, whatever the RTT.
    public var minimumResendInterval: Duration
    /// How long to wait after a gap appears before the first NACK (reordering tolerance).
    public var reorderingDelay: Duration
    /// The most packets tracked as missing: beyond it the oldest are given up (a keyframe is
    /// asked for) and the newest still NACKed.
    public var maxMissing: Int

    public init(maxRetries: Int = 10, minimumResendInterval: Duration = .milliseconds(20),
                reorderingDelay: Duration = .zero, maxMissing: Int = 1000) {
        self.maxRetries = maxRetries
        self.minimumResendInterval = minimumResendInterval
        self.reorderingDelay = reorderingDelay
        self.maxMissing = maxMissing
    }
}

/// What the generator asks the receiver to send now.
public struct NackRequest: Equatable, Sendable {
    /// Sequence numbers to NACK (put them in an `RTCPGenericNack`), in order.
    public var sequenceNumbers: [UInt16]
    /// Whether to send a PLI: some loss will not be repaired.
    public var requestKeyframe: Bool

    public init(sequenceNumbers: [UInt16] = [], requestKeyframe: Bool = false) {
        self.sequenceNumbers = sequenceNumbers
        self.requestKeyframe = requestKeyframe
    }

    public var isEmpty: Bool { sequenceNumbers.isEmpty && !requestKeyframe }
}

/// Tracks missing RTP packets and schedules NACKs and PLIs.
public struct NackGenerator: Sendable {
    private struct Missing: Sendable {
        var detected: Instant
        var lastSent: Instant?
        var retries: Int
    }

    public let configuration: NackConfiguration
    /// The round-trip time estimate that paces resends.
    public private(set) var roundTripTime: Duration
    private var unwrapper = SequenceUnwrapper()
    private var missing: [UInt64: Missing] = [:]
    private var keyframeNeeded = false
    /// No entry is due before this (a lower bound, exact after each scan): `poll` skips the
    /// scan until then, so a packet's arrival costs no walk over everything missing.
    private var earliestDue: Instant?

    public init(configuration: NackConfiguration = .init(), initialRoundTripTime: Duration = .milliseconds(100)) {
        self.configuration = configuration
        roundTripTime = initialRoundTripTime
    }

    /// Sequence numbers currently missing, oldest first.
    public var missingSequenceNumbers: [UInt16] {
        missing.keys.sorted().map { UInt16(truncatingIfNeeded: $0) }
    }

    /// The time between two NACKs of one packet.
    public var resendInterval: Duration { max(roundTripTime, configuration.minimumResendInterval) }

    /// Updates the RTT estimate (from RTCP SR/RR, RFC 3550 §6.4.1).
    public mutating func updateRoundTripTime(_ rtt: Duration) {
        roundTripTime = rtt
        earliestDue = missing.values.map { dueTime($0) }.min()  // entries may now be due sooner
    }

    /// Records an arrived packet: it fills its own hole, or opens one before it. Returns true
    /// when it filled a hole that had already been NACKed (a repair, not mere reordering).
    @discardableResult
    public mutating func received(sequenceNumber: UInt16, now: Instant) -> Bool {
        let previousHighest = unwrapper.highest
        let sequence = unwrapper.unwrap(sequenceNumber)
        guard let previousHighest else { return false }
        if sequence <= previousHighest {
            // A retransmission or a reordered packet.
            return (missing.removeValue(forKey: sequence)?.retries ?? 0) > 0
        }
        markMissing(after: previousHighest, before: sequence, now: now)
        return false
    }

    /// Records `previousHighest + 1 ..< sequence` as missing. Only the newest `maxMissing` are
    /// kept: older ones are given up (a PLI repairs them), so a burst larger than the limit is
    /// still NACKed — the newest packets are the ones a jitter buffer can still use.
    private mutating func markMissing(after previousHighest: UInt64, before sequence: UInt64, now: Instant) {
        guard sequence > previousHighest + 1 else { return }
        let limit = UInt64(max(0, configuration.maxMissing))
        let first = max(previousHighest + 1, sequence - min(sequence - previousHighest - 1, limit))
        if first > previousHighest + 1 { keyframeNeeded = true }
        for lost in first..<sequence {
            missing[lost] = Missing(detected: now, lastSent: nil, retries: 0)
        }
        if missing.count > configuration.maxMissing {
            for sequence in missing.keys.sorted().prefix(missing.count - max(0, configuration.maxMissing)) {
                missing[sequence] = nil
            }
            keyframeNeeded = true
        }
        let due = now + configuration.reorderingDelay
        earliestDue = min(earliestDue ?? due, due)
    }

    /// Declares the stream's last sequence number (the sender said BYE and how many packets it
    /// sent, RFC 3550 §6.4.1): packets after the highest seen are missing like any other, so
    /// losing the end of a stream is noticed and NACKed too.
    public mutating func expectLast(sequenceNumber: UInt16, now: Instant) {
        guard let previousHighest = unwrapper.highest else { return }
        let last = unwrapper.peek(sequenceNumber)
        guard last > previousHighest else { return }
        _ = unwrapper.unwrap(sequenceNumber)
        markMissing(after: previousHighest, before: last + 1, now: now)
    }

    /// Declares the stream's first sequence number (when signaled), so that losing the first
    /// packets is noticed too.
    public mutating func expectFirst(sequenceNumber: UInt16) {
        guard unwrapper.highest == nil else { return }
        _ = unwrapper.unwrap(sequenceNumber &- 1)
    }

    /// How many packets are missing (waiting for a NACK or its answer).
    public var missingCount: Int { missing.count }

    /// What to send now: due NACKs, and a PLI if something was given up on.
    public mutating func poll(now: Instant) -> NackRequest {
        defer { keyframeNeeded = false }
        guard let earliest = earliestDue, now >= earliest else {
            return NackRequest(requestKeyframe: keyframeNeeded)
        }
        var due: [UInt64] = []
        var next: Instant?
        let again = now + resendInterval
        for (sequence, entry) in missing {
            let entryDue = dueTime(entry)
            guard now >= entryDue else {
                next = min(next ?? entryDue, entryDue)
                continue
            }
            if entry.retries >= configuration.maxRetries {
                missing[sequence] = nil
                keyframeNeeded = true
            } else {
                missing[sequence] = Missing(detected: entry.detected, lastSent: now, retries: entry.retries + 1)
                next = min(next ?? again, again)
                due.append(sequence)
            }
        }
        earliestDue = next
        return NackRequest(sequenceNumbers: due.sorted().map { UInt16(truncatingIfNeeded: $0) },
                           requestKeyframe: keyframeNeeded)
    }

    /// When `poll` next has something to do, if nothing arrives before (possibly a little
    /// early: the bound is refreshed by the next `poll`).
    public var nextDeadline: Instant? {
        missing.isEmpty ? nil : earliestDue
    }

    /// When a missing packet is next due: a resend interval after its last NACK, or the
    /// reordering delay after it went missing.
    private func dueTime(_ entry: Missing) -> Instant {
        entry.lastSent.map { $0 + resendInterval } ?? entry.detected + configuration.reorderingDelay
    }

    /// Stops asking for everything before `sequenceNumber` (a keyframe arrived, or the jitter
    /// buffer skipped past them).
    public mutating func forget(before sequenceNumber: UInt16) {
        let limit = unwrapper.peek(sequenceNumber)
        missing = missing.filter { $0.key >= limit }
    }
}
