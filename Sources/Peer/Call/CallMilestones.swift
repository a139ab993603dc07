// The instants a call's summary is made of: when it started, when signaling was complete (both
// descriptions of the epoch set), when ICE selected a pair, when DTLS secured it, when the first
// frame arrived.

import ZoneCore

/// When each stage of a call was first reached.
public struct CallMilestones: Hashable, Sendable {
    public var started: Instant?
    public var signalingComplete: Instant?
    public var iceConnected: Instant?
    /// When media could flow on the pair: DTLS-SRTP keys in place (plain: the pair selected).
    public var mediaSecured: Instant?
    public var firstFrame: Instant?
    public var mediaFinished: Instant?
    public var ended: Instant?

    public init() {}

    /// Milliseconds from the start to `instant`, or nil.
    public func milliseconds(to instant: Instant?) -> Double? {
        guard let started, let instant else { return nil }
        return (instant - started).milliseconds
    }
}
