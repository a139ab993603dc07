import SDP

// Errors of the signaling record layer: identities (spec §1), record fields (spec §2) and the
// payloads they carry (SDP, RFC 8866; candidates, RFC 8839 §5.1).

/// Why an identity could not be formed or a fetched record could not be read as signaling.
///
/// `kind` is for code that reacts; `recordName` and `field` say where; `description` is one line
/// a person can act on. Records come from the other peer, so every problem is an error, never a
/// crash: the inbox drops the record and counts it.
public struct SignalRecordError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was wrong.
    public enum Kind: Hashable, Sendable {
        /// A room ID is not `room_` followed by 8 characters `[a-z0-9]` (spec §1).
        case invalidRoomID
        /// A user ID is empty or holds a byte outside printable ASCII (spec §1).
        case invalidUserID
        /// Both users of a session key are the same user.
        case sameUser
        /// The record is not of the type being decoded.
        case wrongRecordType
        /// A required field is absent.
        case missingField
        /// A field holds a value of the wrong type (a string where an int64 belongs, …).
        case wrongFieldType
        /// A field's value is out of its range (a negative epoch or seq, an empty ID, …).
        case invalidFieldValue
        /// `envelopeType` is neither `offer` nor `answer`.
        case unknownEnvelopeType
        /// `candidateType` is neither `batch-v1` nor `single`.
        case unknownCandidateType
        /// A `batch-v1` candidate field is not the JSON object spec §2 describes.
        case malformedCandidateBatch
        /// An envelope's `payload` is not a session description; `sdpError` says why.
        case invalidSessionDescription
        /// `callEpoch` is further ahead of this device's clock than the configured lead allows: a
        /// record that would pin every later epoch of the pair near `Int64.max`.
        case epochTooFarAhead
        /// A chunk would exceed what the inbox holds for one epoch (a flood of out-of-order chunks).
        case tooManyHeldChunks
        /// A record only its user may write (a `CallMember`) was last modified by someone else.
        case writtenByAnotherUser
    }

    /// What was wrong.
    public var kind: Kind
    /// The record the problem is in, when there is one.
    public var recordName: String?
    /// The field the problem is in, when there is one.
    public var field: String?
    /// The problem in words.
    public var detail: String
    /// For `.invalidSessionDescription`, the SDP parser's error.
    public var sdpError: SDPParseError?

    public init(_ kind: Kind, recordName: String? = nil, field: String? = nil, detail: String,
                sdpError: SDPParseError? = nil) {
        self.kind = kind
        self.recordName = recordName
        self.field = field
        self.detail = detail
        self.sdpError = sdpError
    }

    public var description: String {
        var text = "signaling record"
        if let recordName { text += " \(SDPGrammar.quoted(recordName, limit: 80))" }
        if let field { text += ", field \(field)" }
        return text + ": " + detail
    }
}
