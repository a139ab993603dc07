// A stand-in for the ICE agent until the real one lands. It keeps what a peer connection keeps
// (one local generation, one remote description) and logs every application, so tests can see
// stale, duplicate and misplaced applications. It "gathers" two host candidates per generation
// and "connects" `checkDuration` after: our description and the remote description of the same
// epoch are set, the remote description's ufrag is the remote peer's current generation (what
// STUN integrity would check), and at least one good remote candidate was added.
import SDP
import Signaling
import ZoneCore

struct FakeICE {
    let hostOctet: UInt8
    var checkDuration: Duration = .milliseconds(200)
    /// Whether gathering ends with end-of-candidates (off: a later chunk may still come).
    var sendsEndOfCandidates = true

    private(set) var localEpoch: CallEpoch?
    private(set) var localUfrag: String?
    private(set) var localDescriptionEpoch: CallEpoch?
    private(set) var remote: (epoch: CallEpoch, ufrag: String?, type: SDPType)?
    private(set) var goodCandidates = 0
    private(set) var connectedEpoch: CallEpoch?
    private var connectAt: Instant?
    private var gathered: Set<CallEpoch> = []
    private var seenDescriptions: Set<String> = []
    private var seenCandidates: Set<String> = []

    /// Every remote description applied, in order.
    private(set) var appliedDescriptions: [(epoch: CallEpoch, type: SDPType)] = []
    /// Every remote candidate added, in order.
    private(set) var appliedCandidates: [(epoch: CallEpoch, candidate: ICECandidate)] = []
    /// Candidates added with no remote description of their epoch (`addIceCandidate` fails).
    private(set) var candidateErrors = 0
    /// Candidates whose ufrag is not the remote description's.
    private(set) var wrongUfragCandidates = 0
    /// Remote offers applied over a remote description of the same or a later epoch.
    private(set) var resets = 0
    /// Descriptions applied twice (same epoch and type) and candidates added twice.
    private(set) var duplicateDescriptions = 0
    private(set) var duplicateCandidates = 0
    /// Times the connection came up.
    private(set) var connections: [CallEpoch] = []
    private(set) var closed = false

    init(hostOctet: UInt8) { self.hostOctet = hostOctet }

    /// Whether a remote description of an epoch below `epoch` was ever applied, or any
    /// description or candidate of the epochs in `old`.
    func applied(anyOf old: Set<CallEpoch>) -> Bool {
        appliedDescriptions.contains { old.contains($0.epoch) } || appliedCandidates.contains { old.contains($0.epoch) }
    }

    mutating func perform(_ command: ICECommand, now: Instant) -> [ICEEvent] {
        switch command {
        case .restartICE(let epoch, let credentials):
            localEpoch = epoch
            localUfrag = credentials.usernameFragment
            localDescriptionEpoch = nil
            connectedEpoch = nil
            connectAt = nil
            goodCandidates = 0
            return []
        case .setLocalDescription(let epoch, _):
            guard epoch == localEpoch else { return [] }
            localDescriptionEpoch = epoch
            guard gathered.insert(epoch).inserted, let ufrag = localUfrag else { return [] }
            let gathered: [ICEEvent] = [.localCandidates(epoch: epoch, hostCandidates(ufrag: ufrag))]
            return gathered + (sendsEndOfCandidates ? [.gatheringComplete(epoch: epoch)] : [])
        case .applyRemoteDescription(let epoch, let description):
            if !seenDescriptions.insert("\(epoch) \(description.type)").inserted { duplicateDescriptions += 1 }
            appliedDescriptions.append((epoch, description.type))
            if description.type == .offer, let remote, remote.epoch >= epoch {
                resets += 1
                connectedEpoch = nil
                connectAt = nil
            }
            if description.type == .answer, let remote, remote.epoch == epoch, remote.type == .answer {
                return [] // InvalidStateError in WebRTC: nothing changes
            }
            let ufrag = description.media.first?.iceUsernameFragment
            if remote?.epoch != epoch || remote?.ufrag != ufrag { goodCandidates = 0 }
            remote = (epoch, ufrag, description.type)
            return []
        case .addRemoteCandidates(let epoch, let candidates, _):
            guard let remote, remote.epoch == epoch else {
                candidateErrors += candidates.count
                return []
            }
            for candidate in candidates {
                if !seenCandidates.insert("\(epoch) \(candidate)").inserted { duplicateCandidates += 1 }
                appliedCandidates.append((epoch, candidate))
                if let ufrag = candidate.usernameFragment, ufrag != remote.ufrag {
                    wrongUfragCandidates += 1
                } else {
                    goodCandidates += 1
                }
            }
            return []
        case .close:
            closed = true
            connectedEpoch = nil
            return []
        }
    }

    /// Connectivity checks: "succeed" `checkDuration` after the conditions hold.
    mutating func tick(now: Instant, peer: FakeICE) -> [ICEEvent] {
        guard !closed, let epoch = localEpoch, localDescriptionEpoch == epoch, let remote, remote.epoch == epoch,
            remote.ufrag == peer.localUfrag, peer.localEpoch == epoch, goodCandidates > 0
        else {
            connectAt = nil
            return []
        }
        if connectedEpoch == epoch { return [] }
        let due = connectAt ?? now + checkDuration
        connectAt = due
        guard now >= due else { return [] }
        connectedEpoch = epoch
        connectAt = nil
        connections.append(epoch)
        return [.connected(epoch: epoch)]
    }

    private func hostCandidates(ufrag: String) -> [ICECandidate] {
        (1...2).map { n in
            ICECandidate(
                foundation: String(n), priority: ICECandidate.priority(typePreference: 126, localPreference: 65_535,
                                                                       component: 1),
                address: .ip(try! IPAddress(parsing: "192.0.2.\(hostOctet)")), port: UInt16(50_000 + n),
                type: .host, generation: 0, usernameFragment: ufrag)
        }
    }
}
