// Everything one peer's call is created with.

import Signaling
import ZoneCore

/// A peer's call configuration: who, how it learns of records, where its sockets are, what media.
public struct PeerCallConfiguration: Sendable {
    public var myUserID: String
    public var remoteUserID: String
    /// Sync strategy, protections, timing (`standard(...)` or `legacy`).
    public var signaling: SignalingConfiguration
    /// The device's epoch clock (carried from call to call).
    public var epochClock: EpochClock
    public var transport: PeerTransportConfiguration
    public var media: CallMediaConfiguration
    /// The seed of every random choice of the call.
    public var seed: UInt64

    public init(myUserID: String, remoteUserID: String, signaling: SignalingConfiguration = .default,
                epochClock: EpochClock = EpochClock(), transport: PeerTransportConfiguration,
                media: CallMediaConfiguration = CallMediaConfiguration(), seed: UInt64) {
        self.myUserID = myUserID
        self.remoteUserID = remoteUserID
        self.signaling = signaling
        self.epochClock = epochClock
        self.transport = transport
        self.media = media
        self.seed = seed
    }
}
