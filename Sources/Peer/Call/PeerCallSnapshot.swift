// What a call's summary is made of, taken out of the machine so it can cross threads.

import ICE
import Signaling
import ZoneCore

/// A call's milestones, path and counters at one moment.
public struct PeerCallSnapshot: Sendable {
    public var milestones: CallMilestones
    public var callState: CallState
    public var iceState: ConnectionState
    /// The selected pair's local and remote candidate kinds and addresses.
    public var localCandidate: String?
    public var remoteCandidate: String?
    /// `host`, `srflx`, `prflx` or `relay`: the local candidate's kind of the selected pair.
    public var pathKind: String?
    public var signaling: SignalingCounters
    public var media: CallMediaStats
    /// ICE restarts tried since the call first connected.
    public var restartsTried: Int
    /// What the call dropped.
    public var drops: CallDrops

    public init(_ call: borrowing PeerCall) {
        milestones = call.milestones
        callState = call.signaling.negotiator.state
        iceState = call.report.iceState
        if let pair = call.report.lastSelectedPair {
            localCandidate = "\(pair.local.kind.rawValue) \(pair.local.address)"
            remoteCandidate = "\(pair.remote.kind.rawValue) \(pair.remote.address)"
            pathKind = pair.local.kind == .relay || pair.remote.kind == .relay ? "relay" : pair.local.kind.rawValue
        }
        signaling = call.signaling.counters
        media = call.media.stats
        restartsTried = call.report.restartsTried
        drops = CallDrops(transports: call.transportDrops, unsent: call.report.unsentDatagrams,
                          withoutTransport: call.report.datagramsWithoutTransport,
                          unprotected: call.unprotectedDrops)
        drops.offPairGoodbyes = call.report.refusedGoodbyes
    }
}

/// Everything a call dropped on its way, by where: for the summary and `--json`.
public struct CallDrops: Sendable, Codable, Equatable {
    /// STUN and ChannelData that did not decode, or STUN other than Binding reaching ICE.
    public var malformedSTUN: Int
    /// Requests and responses of our own that could not be encoded.
    public var unencodableSTUN: Int
    /// Application data from no known remote candidate.
    public var unknownSource: Int
    /// Datagrams a TURN client refused or dropped (no allocation, queue full, no permission).
    public var relayRefused: Int
    /// Datagrams for the pair that could not be sent (no pair, the transport refused them).
    public var unsent: Int
    /// Datagrams no transport took (before the first, or after the call closed its transports).
    public var withoutTransport: Int
    /// Media before the path was secured (DTLS not done), or datagrams before DTLS was set up.
    public var beforeProtection: Int
    /// Datagrams the kernel refused to send: the driver's count (the call never sees a socket),
    /// 0 until the driver sets it.
    public var socketRefused = 0
    /// Plain goodbyes naming a leg's remote that did not come on the leg's selected pair (a group call's
    /// leg, docs/PROTOCOL.md §11.4): refused, the leg goes on.
    public var offPairGoodbyes = 0

    public init(transports: ICETransport.Drops, unsent: Int, withoutTransport: Int, unprotected: Int) {
        malformedSTUN = transports.malformed
        unencodableSTUN = transports.unencodable
        unknownSource = transports.unknownSource
        relayRefused = transports.unsentThroughRelays + transports.relayPayloads
        self.unsent = unsent
        self.withoutTransport = withoutTransport
        beforeProtection = unprotected
    }

    /// Every drop counted.
    public var total: Int {
        malformedSTUN + unencodableSTUN + unknownSource + relayRefused + unsent + withoutTransport + beforeProtection
            + socketRefused + offPairGoodbyes
    }

    /// "none", or the counts that are not zero, by where.
    public var text: String {
        let parts = [(malformedSTUN, "malformed STUN"), (unencodableSTUN, "unencodable STUN"),
                     (unknownSource, "from unknown sources"), (relayRefused, "refused by the relay"),
                     (unsent, "unsent on the pair"), (withoutTransport, "without a transport"),
                     (beforeProtection, "before protection"), (socketRefused, "refused by the socket"),
                     (offPairGoodbyes, "goodbyes off the pair")]
            .filter { $0.0 > 0 }.map { "\($0.0) \($0.1)" }
        return parts.isEmpty ? "none" : parts.joined(separator: ", ")
    }
}
