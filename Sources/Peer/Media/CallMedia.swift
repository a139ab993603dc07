// The media of a call: what this peer sends and receives once a pair is selected.
// (Placeholder until the Media session machines land: no media.)

import Media
import Signaling
import ZoneCore

/// What media a peer sends and receives.
public struct CallMediaConfiguration: Sendable {
    public init() {}
}

/// The media side of a call, sans-I/O.
public struct CallMedia {
    public enum Input: Sendable { case timer }
    public enum Output: Sendable {
        case packet([UInt8])
        case frame(VideoFrame)
        case finished
    }

    public let configuration: CallMediaConfiguration

    init(configuration: CallMediaConfiguration) {
        self.configuration = configuration
    }

    mutating func localDescription(_ description: SessionDescription) {}
    mutating func remoteDescription(_ description: SessionDescription) {}
    mutating func connected(now: Instant) {}
    mutating func received(_ bytes: [UInt8], now: Instant) {}
    mutating func stop(now: Instant) {}
    mutating func handle(_ input: Input, now: Instant) {}
    mutating func pollOutput(now: Instant) -> Output? { nil }
    var nextDeadline: Instant? { nil }
    public var stats: CallMediaStats { CallMediaStats() }
}

/// What the media of a call did.
public struct CallMediaStats: Sendable, Codable, Equatable {
    public var framesSent = 0
    public var framesReceived = 0
    public var sentDigest: String?
    public var receivedDigest: String?
    public init() {}
    /// A line for the summary, or nil when there was no media.
    public var summaryText: String? { nil }
    /// A fragment for the live progress line, or nil.
    public var progressText: String? { nil }
}
