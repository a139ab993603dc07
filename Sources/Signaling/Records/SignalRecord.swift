// A fetched record read as signaling (spec §2), and the facts garbage collection keeps about it
// (spec §3).
import RecordStore

/// A fetched record, read by its type.
public enum SignalRecord: Hashable, Sendable {
    /// A `Room` record.
    case room(Room)
    /// A `RoomMember` record.
    case member(RoomMember)
    /// A `SignalSession` record.
    case session(SignalSession)
    /// A `SignalEnvelope` record. Indirect: an envelope is twice the size of any other case, and
    /// only a few records of a call are envelopes.
    indirect case envelope(SignalEnvelope)
    /// A `SignalIceChunk` record.
    case iceChunk(SignalIceChunk)

    /// Reads `record` by its type; nil for record types signaling does not know (messages, …).
    /// Envelopes and batch chunks take what `payloads` remembers of their payload's text.
    public static func decode(_ record: Record,
                              payloads: SignalPayloadCache? = nil) throws(SignalRecordError) -> SignalRecord? {
        switch record.recordType {
        case SignalRecordType.room: return .room(try Room(decoding: record))
        case SignalRecordType.roomMember: return .member(try RoomMember(decoding: record))
        case SignalRecordType.session: return .session(try SignalSession(decoding: record))
        case SignalRecordType.envelope: return .envelope(try SignalEnvelope(decoding: record, payloads: payloads))
        case SignalRecordType.iceChunk: return .iceChunk(try SignalIceChunk(decoding: record, payloads: payloads))
        default: return nil
        }
    }

    /// The session key the record belongs to (signal records only).
    public var sessionKey: String? {
        switch self {
        case .room, .member: return nil
        case .session(let s): return s.sessionKey
        case .envelope(let e): return e.sessionKey
        case .iceChunk(let c): return c.sessionKey
        }
    }

    /// The record's epoch (signal records only).
    public var callEpoch: CallEpoch? {
        switch self {
        case .room, .member: return nil
        case .session(let s): return s.callEpoch
        case .envelope(let e): return e.callEpoch
        case .iceChunk(let c): return c.callEpoch
        }
    }

    /// The user who made the record's content.
    public var ownerUserID: String? {
        switch self {
        case .room: return nil
        case .member(let m): return m.userID
        case .session(let s): return s.userID
        case .envelope(let e): return e.ownerUserID
        case .iceChunk(let c): return c.ownerUserID
        }
    }
}

/// What garbage collection needs to know of one signal record of an epoch.
public struct SignalRecordSummary: Hashable, Sendable {
    public var id: RecordID
    public var recordType: String
    public var callEpoch: CallEpoch
    public var ownerUserID: String
    /// The server's modification time, milliseconds since 1970 (nil for a record never saved).
    public var modifiedMs: Int64?

    public init(id: RecordID, recordType: String, callEpoch: CallEpoch, ownerUserID: String, modifiedMs: Int64?) {
        self.id = id
        self.recordType = recordType
        self.callEpoch = callEpoch
        self.ownerUserID = ownerUserID
        self.modifiedMs = modifiedMs
    }

    /// The summary of an envelope or chunk; nil for other records (sessions are never collected).
    public init?(_ record: Record, _ content: SignalRecord) {
        switch content {
        case .envelope(let e): ownerUserID = e.ownerUserID; callEpoch = e.callEpoch
        case .iceChunk(let c): ownerUserID = c.ownerUserID; callEpoch = c.callEpoch
        case .room, .member, .session: return nil
        }
        id = record.id
        recordType = record.recordType
        modifiedMs = record.modified?.timestamp
    }
}
