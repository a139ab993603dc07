// Deterministic record names, spec §2 (concern E: the shared database has no zone-wide
// queries, so both peers compute names and fetch by them) and their compaction (concern G:
// CloudKit record names are at most 255 ASCII characters).
import RecordStore
import ZoneCore

/// The names of every record of one session: computed the same way by both peers.
///
/// | record | name |
/// |---|---|
/// | `SignalSession` | `SS_<sessionKey>` |
/// | `SignalEnvelope` | `SE_<sessionKey>_<callEpoch>_<offer\|answer>` |
/// | `SignalIceChunk` | `IC_<sessionKey>_<callEpoch>_<ownerUserId>_<uuid>` |
///
/// When a name would exceed 255 characters, its `sessionKey` part (only in the name, never in
/// the fields) becomes `h` + the hex of the first 16 bytes of SHA-256(sessionKey). Where the
/// spec is silent — a chunk whose owner ID alone is too long — the owner part is compacted the
/// same way. Both peers apply the rule name by name, so they always agree.
public struct SignalRecordNames: Hashable, Sendable {
    /// The session the names belong to.
    public let sessionKey: SessionKey

    public init(sessionKey: SessionKey) { self.sessionKey = sessionKey }

    /// `SS_<sessionKey>`.
    public var session: String {
        Self.fit(sessionKey.rawValue) { key in Self.joined("SS_", key) }
    }

    /// `SE_<sessionKey>_<callEpoch>_<offer|answer>`.
    public func envelope(epoch: CallEpoch, type: EnvelopeType) -> String {
        Self.fit(sessionKey.rawValue) { key in Self.joined("SE_", key, "_", epoch.description, "_", type.rawValue) }
    }

    /// `IC_<sessionKey>_<callEpoch>_<ownerUserId>_<uuid>`.
    public func iceChunk(epoch: CallEpoch, owner: String, uuid: String) -> String {
        let name = Self.fit(sessionKey.rawValue) { key in
            Self.joined("IC_", key, "_", epoch.description, "_", owner, "_", uuid)
        }
        if name.utf8.count <= NameRules.maxRecordNameLength { return name }
        let key = Self.compact(sessionKey.rawValue)
        return "IC_\(key)_\(epoch)_\(Self.compact(owner))_\(uuid)"
    }

    /// `RM_<userId>` (compacted the same way when the user ID is very long).
    public static func member(_ userID: String) -> String {
        fit(userID) { id in "RM_\(id)" }
    }

    /// `CM_<userId>`, the user's presence in the room's group call (compacted like `RM_`).
    public static func callMember(_ userID: String) -> String {
        fit(userID) { id in "CM_\(id)" }
    }

    /// `h` and the hex of the first 16 bytes of SHA-256(`text`): 33 characters.
    public static func compact(_ text: String) -> String {
        let digest = SHA256.hash(Array(text.utf8)).prefix(16)
        return "h" + Hex.encode(digest)
    }

    /// The parts one after another, in a string allocated once at its final size (a name is built
    /// for every record saved and for every fetched record checked against ours).
    /// Their bytes are appended, not the parts as strings.
    private static func joined(_ parts: String...) -> String {
        let count = parts.reduce(0) { $0 + $1.utf8.count }
        return String(unsafeUninitializedCapacity: count) { name in
            var end = 0
            for var part in parts {
                end = part.withUTF8 { bytes in
                    UnsafeMutableBufferPointer(rebasing: name[end...]).initialize(fromContentsOf: bytes) + end
                }
            }
            return end
        }
    }

    /// Builds a name from `part`, compacting the part when the whole would be too long.
    private static func fit(_ part: String, _ build: (String) -> String) -> String {
        let full = build(part)
        return full.utf8.count <= NameRules.maxRecordNameLength ? full : build(compact(part))
    }
}
