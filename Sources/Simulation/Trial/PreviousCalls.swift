// The leftovers of earlier calls in a room's zone (docs/SIGNALING.md §7 scenario 1, and what the
// reference design's zones filled up with since it never deleted a signal): for each old epoch,
// the offer creator's offer and candidate chunk, the other peer's answer and chunk, and the
// session record naming the newest of them. Built with the module's own record types, so only
// their epochs and credentials are old.
import Foundation
import RecordStore
import SDP
import Signaling
import ZoneCore

/// Records of `count` earlier calls between two peers, newest first, a minute apart.
struct PreviousCalls {
    /// Records each peer wrote, to be saved as that peer.
    var byOfferCreator: [Record] = []
    var byAnswerer: [Record] = []
    /// The old epochs.
    var epochs: [CallEpoch] = []

    init(count: Int, names: SignalRecordNames, offerCreator: (user: String, zone: ZoneID),
         answerer: (user: String, zone: ZoneID), before start: Instant, random: inout SeededRandom) {
        guard count > 0 else { return }
        let key = names.sessionKey
        for k in 1...count {
            let epoch = CallEpoch(milliseconds: start.millisecondsSinceEpoch - Int64(k) * 60_000)
            epochs.append(epoch)
            let offerCredentials = ICECredentials.random(using: &random)
            let answerCredentials = ICECredentials.random(using: &random)
            let offer = SessionDescription.silentVideoOffer(SilentVideoConfiguration(
                sessionID: random.next() >> 1, iceCredentials: offerCredentials, dtls: nil))
            guard let answer = try? SessionDescription.answer(to: offer, SilentVideoConfiguration(
                sessionID: random.next() >> 1, iceCredentials: answerCredentials, dtls: nil)) else { continue }
            for (type, description, side) in [(EnvelopeType.offer, offer, offerCreator),
                                              (EnvelopeType.answer, answer, answerer)] {
                let envelope = SignalEnvelope(
                    sessionKey: key.rawValue, roomID: key.roomID.rawValue, callEpoch: epoch, ownerUserID: side.user,
                    envelopeType: type, description: description, updatedAtMs: epoch.milliseconds)
                let record = envelope.record(name: names.envelope(epoch: epoch, type: type), in: side.zone)
                if type == .offer { byOfferCreator.append(record) } else { byAnswerer.append(record) }
            }
            for (credentials, side, octet) in [(offerCredentials, offerCreator, UInt8(10)),
                                               (answerCredentials, answerer, UInt8(20))] {
                // Where that peer was on that day: an address nobody answers at now.
                let candidate = ICECandidate(
                    foundation: "1", priority: ICECandidate.priority(typePreference: 126, localPreference: 65_535,
                                                                     component: 1),
                    address: .ip(.v4(0xC633_6400 | UInt32(octet) << 0)), port: UInt16(41_000 + k), type: .host,
                    usernameFragment: credentials.usernameFragment)
                let chunk = SignalIceChunk(
                    sessionKey: key.rawValue, roomID: key.roomID.rawValue, callEpoch: epoch, ownerUserID: side.user,
                    candidates: [candidate], endOfCandidates: true, chunkCreatedAtMs: epoch.milliseconds, seq: 0,
                    ufrag: credentials.usernameFragment)
                let uuid = String(format: "%016llx%016llx", random.next(), random.next())
                let record = chunk.record(name: names.iceChunk(epoch: epoch, owner: side.user, uuid: uuid),
                                          in: side.zone)
                if side.user == offerCreator.user { byOfferCreator.append(record) } else { byAnswerer.append(record) }
            }
        }
        let newest = SignalSession(sessionKey: key.rawValue, roomID: key.roomID.rawValue, userID: offerCreator.user,
                                   otherUserID: answerer.user, callEpoch: epochs[0],
                                   updatedAtMs: epochs[0].milliseconds)
        byOfferCreator.append(newest.record(over: nil, name: names.session, in: offerCreator.zone))
    }
}
