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
    /// DTLS-SRTP or plain RTP on the selected pair (plain unless told: the simulator's default).
    public var mediaSecurity: MediaProtectionMode = .none
    /// With DTLS-SRTP: a handshake not done this long after the pair is selected fails the call (`zonertc peer
    /// --dtls-timeout`).
    public var dtlsHandshakeTimeout: Duration = .seconds(10)
    /// When the call ends by itself.
    public var lifetime: CallLifetime
    /// The seed of every random choice of the call.
    public var seed: UInt64

    public init(myUserID: String, remoteUserID: String, signaling: SignalingConfiguration = .default,
                epochClock: EpochClock = EpochClock(), transport: PeerTransportConfiguration,
                media: CallMediaConfiguration = CallMediaConfiguration(), lifetime: CallLifetime = CallLifetime(),
                seed: UInt64) {
        self.myUserID = myUserID
        self.remoteUserID = remoteUserID
        self.signaling = signaling
        self.epochClock = epochClock
        self.transport = transport
        self.media = media
        self.lifetime = lifetime
        self.seed = seed
    }
}

/// When a call hangs up by itself: these are decisions of the call, so the machine takes them
/// on its own deadlines, the same in the real runner and the simulator.
public struct CallLifetime: Sendable {
    /// Fail and hang up when no pair is selected this long after the start (nil: never).
    public var connectTimeout: Duration?
    /// Hang up this long after the first pair is selected (nil: not for that reason).
    public var holdAfterConnect: Duration?
    /// Hang up once every media stream this peer takes part in is done.
    public var endAfterMedia: Bool
    /// Fail and hang up when the media is not done this long after the first pair is selected
    /// (nil: never) — the bound on waiting for a stream's end (its BYE, or
    /// `CallMediaConfiguration.receiveFrames`).
    public var mediaTimeout: Duration?
    /// ICE restarts (new epochs) a connected call tries after its path failed — every pair
    /// failed, or consent expired (RFC 7675 §5.1) — before it ends with `remote unreachable`.
    public var reconnectAttempts: Int
    /// How long, after the path of a connected call failed, a new epoch may take to select a
    /// pair before the call ends with `remote unreachable`. With consent expiry E, a call whose
    /// remote vanished ends at most E + `reconnectTimeout` after the remote's last response.
    public var reconnectTimeout: Duration

    public init(connectTimeout: Duration? = nil, holdAfterConnect: Duration? = nil, endAfterMedia: Bool = false,
                mediaTimeout: Duration? = nil, reconnectAttempts: Int = 1, reconnectTimeout: Duration = .seconds(15)) {
        self.connectTimeout = connectTimeout
        self.holdAfterConnect = holdAfterConnect
        self.endAfterMedia = endAfterMedia
        self.mediaTimeout = mediaTimeout
        self.reconnectAttempts = max(0, reconnectAttempts)
        self.reconnectTimeout = reconnectTimeout
    }
}
