// Well-formed signal records made by hand: leftovers of old calls, re-saved records, chunks a
// peer would not send. They are built with the module's own record types, so only their
// content (epoch, seq, ufrag) is unusual.
import RecordStore
import SDP
import Signaling
import ZoneCore

enum SignalFixtures {
    static func credentials(_ ufrag: String) -> ICECredentials {
        ICECredentials(usernameFragment: ufrag, password: "fixturepasswordfixturepw")
    }

    static func candidate(octet: UInt8, port: UInt16 = 40_000, ufrag: String?) -> ICECandidate {
        ICECandidate(foundation: "9", priority: 2_122_260_223,
                     address: .ip(try! IPAddress(parsing: "192.0.2.\(octet)")), port: port, type: .host,
                     usernameFragment: ufrag)
    }

    static func offerDescription(ufrag: String) -> SessionDescription {
        .silentVideoOffer(SilentVideoConfiguration(sessionID: 7, iceCredentials: credentials(ufrag), dtls: nil))
    }

    static func envelope(_ type: EnvelopeType, by peer: TestPeer, epoch: CallEpoch, ufrag: String) -> Record {
        let names = peer.negotiator.names
        let offer = offerDescription(ufrag: ufrag)
        let description = type == .offer
            ? offer
            : try! SessionDescription.answer(
                to: offerDescription(ufrag: "them"),
                SilentVideoConfiguration(sessionID: 8, iceCredentials: credentials(ufrag), dtls: nil))
        return SignalEnvelope(
            sessionKey: names.sessionKey.rawValue, roomID: names.sessionKey.roomID.rawValue, callEpoch: epoch,
            ownerUserID: peer.userID, envelopeType: type, description: description, updatedAtMs: epoch.milliseconds
        ).record(name: names.envelope(epoch: epoch, type: type), in: peer.binding.zone)
    }

    static func chunk(by peer: TestPeer, epoch: CallEpoch, seq: Int64, ufrag: String, candidates: [ICECandidate],
                      endOfCandidates: Bool = false, encoding: CandidateEncoding = .batch) -> Record {
        let names = peer.negotiator.names
        return SignalIceChunk(
            sessionKey: names.sessionKey.rawValue, roomID: names.sessionKey.roomID.rawValue, callEpoch: epoch,
            ownerUserID: peer.userID, encoding: encoding, candidates: candidates, endOfCandidates: endOfCandidates,
            chunkCreatedAtMs: epoch.milliseconds, seq: seq, ufrag: ufrag
        ).record(name: names.iceChunk(epoch: epoch, owner: peer.userID, uuid: "fixture\(epoch)s\(seq)"),
                 in: peer.binding.zone)
    }

    static func session(by peer: TestPeer, other: TestPeer, epoch: CallEpoch) -> Record {
        let names = peer.negotiator.names
        return SignalSession(sessionKey: names.sessionKey.rawValue, roomID: names.sessionKey.roomID.rawValue,
                             userID: peer.userID, otherUserID: other.userID, callEpoch: epoch,
                             updatedAtMs: epoch.milliseconds)
            .record(over: nil, name: names.session, in: peer.binding.zone)
    }
}
