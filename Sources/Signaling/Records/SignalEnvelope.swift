// `SignalEnvelope`, spec §2: `SE_<sessionKey>_<callEpoch>_<offer|answer>`, one offer or answer
// of one epoch, the SDP (RFC 8866, JSEP RFC 8829) in `payload`.
import RecordStore
import SDP

/// Whether an envelope carries an offer or an answer (`envelopeType`).
public enum EnvelopeType: String, Hashable, Sendable, CaseIterable {
    /// An offer (RFC 3264 §5).
    case offer
    /// An answer (RFC 3264 §6).
    case answer

    /// The SDP type the envelope's payload is parsed as.
    public var sdpType: SDPType { self == .offer ? .offer : .answer }
}

/// One offer or answer of one epoch.
public struct SignalEnvelope: Hashable, Sendable {
    public var sessionKey: String
    public var roomID: String
    public var callEpoch: CallEpoch
    /// The user who made the description.
    public var ownerUserID: String
    public var envelopeType: EnvelopeType
    /// The session description, parsed from (or printed to) `payload`.
    public var description: SessionDescription
    /// When the owner saved it, milliseconds since 1970 (the owner's clock).
    public var updatedAtMs: Int64

    public init(sessionKey: String, roomID: String, callEpoch: CallEpoch, ownerUserID: String,
                envelopeType: EnvelopeType, description: SessionDescription, updatedAtMs: Int64) {
        self.sessionKey = sessionKey
        self.roomID = roomID
        self.callEpoch = callEpoch
        self.ownerUserID = ownerUserID
        self.envelopeType = envelopeType
        self.description = description
        self.updatedAtMs = updatedAtMs
    }

    /// The record to save, named `name` in `zone`.
    public func record(name: String, in zone: ZoneID) -> Record { record(name: name, in: zone, payloads: nil) }

    /// The record to save, named `name` in `zone`; `payloads` learns the payload's text.
    public func record(name: String, in zone: ZoneID, payloads: SignalPayloadCache?) -> Record {
        let payload = description.description
        payloads?.remember(description, as: payload)
        return Record(recordType: SignalRecordType.envelope, id: RecordID(recordName: name, zoneID: zone), fields: [
            SignalField.sessionKey: .string(sessionKey), SignalField.roomID: .string(roomID),
            SignalField.callEpoch: .int64(callEpoch.milliseconds), SignalField.ownerUserId: .string(ownerUserID),
            SignalField.envelopeType: .string(envelopeType.rawValue),
            SignalField.payload: .string(payload), SignalField.updatedAt: .timestamp(updatedAtMs),
        ])
    }

    /// Reads a fetched `SignalEnvelope` record, parsing its payload as an offer or an answer.
    public init(decoding record: borrowing Record) throws(SignalRecordError) {
        try self.init(decoding: record, payloads: nil)
    }

    /// Reads a fetched `SignalEnvelope` record, parsing its payload as an offer or an answer —
    /// unless `payloads` holds the description it was printed from.
    public init(decoding record: borrowing Record, payloads: SignalPayloadCache?) throws(SignalRecordError) {
        let r = try FieldReader(record, type: SignalRecordType.envelope)
        sessionKey = try r.nonEmptyString(SignalField.sessionKey)
        roomID = try r.nonEmptyString(SignalField.roomID)
        callEpoch = try r.epoch()
        ownerUserID = try r.nonEmptyString(SignalField.ownerUserId)
        let typeText = try r.string(SignalField.envelopeType)
        guard let type = EnvelopeType(rawValue: typeText) else {
            throw SignalRecordError(.unknownEnvelopeType, recordName: record.id.recordName,
                                    field: SignalField.envelopeType,
                                    detail: "\(SDPGrammar.quoted(typeText, limit: 20)) is neither offer nor answer")
        }
        envelopeType = type
        updatedAtMs = try r.milliseconds(SignalField.updatedAt)
        let payload = try r.string(SignalField.payload)
        if let known = payloads?.description(printedAs: payload, type: type.sdpType) {
            description = known
            return
        }
        do {
            description = try SessionDescription(parsing: payload, type: type.sdpType)
        } catch {
            throw SignalRecordError(.invalidSessionDescription, recordName: record.id.recordName,
                                    field: SignalField.payload, detail: error.description, sdpError: error)
        }
    }
}
