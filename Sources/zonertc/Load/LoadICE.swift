import SDP
import Signaling
import ZoneCore

/// The ICE agent of one peer of a call `zonertc bench load` plays: no sockets, since the bench
/// measures the calls' signaling through the store, not connectivity checks (over loopback those take
/// well under a millisecond: docs/BENCHMARKS.md "ICE, STUN and digests").
///
/// It keeps what a real agent's connectivity checks depend on, so a call is only reported connected
/// when the signaling really delivered what ICE needs: it "gathers" one host candidate of its own
/// once its description of an epoch is set, and its epoch connects once both peers have set their own
/// description of that epoch, applied the other's (carrying the username fragment the other uses
/// now) and added at least one candidate of it.
struct LoadICE {
    /// The last octet of the candidate's made-up address, so the two peers' differ.
    let octet: UInt8
    private(set) var epoch: CallEpoch?
    private(set) var usernameFragment: String?
    /// The epoch whose local description is set (candidates are gathered for it once).
    private var described: CallEpoch?
    private var gathered: CallEpoch?
    /// The remote description applied, and the candidates of it added since.
    private var remote: (epoch: CallEpoch, usernameFragment: String?)?
    private var remoteCandidates = 0
    private(set) var connected: CallEpoch?
    private var closed = false

    init(octet: UInt8) { self.octet = octet }

    /// Carries out a command; the events it causes at once (gathering).
    mutating func perform(_ command: ICECommand) -> [ICEEvent] {
        switch command {
        case .restartICE(let epoch, let credentials):
            self.epoch = epoch
            usernameFragment = credentials.usernameFragment
            described = nil
            connected = nil
            return []
        case .setLocalDescription(let epoch, _):
            guard epoch == self.epoch, let usernameFragment else { return [] }
            described = epoch
            guard gathered != epoch else { return [] }
            gathered = epoch
            let candidate = ICECandidate(
                foundation: "1", priority: ICECandidate.priority(typePreference: 126, localPreference: 65_535,
                                                                 component: 1),
                address: .ip(.v4(0xC000_0200 | UInt32(octet))), port: 9, type: .host, generation: 0,
                usernameFragment: usernameFragment)
            return [.localCandidates(epoch: epoch, [candidate], endOfCandidates: true)]
        case .applyRemoteDescription(let epoch, let description):
            let fragment = description.media.first?.iceUsernameFragment
            if remote?.epoch != epoch || remote?.usernameFragment != fragment { remoteCandidates = 0 }
            remote = (epoch, fragment)
            return []
        case .addRemoteCandidates(let epoch, let candidates, _):
            guard let remote, remote.epoch == epoch else { return [] }
            remoteCandidates += candidates.filter { $0.usernameFragment == nil
                || $0.usernameFragment == remote.usernameFragment }.count
            return []
        case .close:
            closed = true
            connected = nil
            return []
        }
    }

    /// Whether the checks with `peer` succeed now: `.connected` the first time they do for an epoch.
    mutating func check(with peer: LoadICE) -> ICEEvent? {
        guard !closed, let epoch, connected != epoch, described == epoch, peer.epoch == epoch,
              peer.described == epoch, let remote, remote.epoch == epoch,
              remote.usernameFragment == peer.usernameFragment, remoteCandidates > 0 else { return nil }
        connected = epoch
        return .connected(epoch: epoch)
    }
}
