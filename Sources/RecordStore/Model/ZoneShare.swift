/// What a share lets a participant do.
public enum SharePermission: String, Hashable, Sendable, Codable {
    /// No access (only meaningful as a share's public permission).
    case none
    case readOnly
    case readWrite

    var allowsRead: Bool { self != .none }
    var allowsWrite: Bool { self == .readWrite }
}

/// Where a participant stands with a share.
public enum ParticipantStatus: String, Hashable, Sendable, Codable {
    /// Added by the owner, not yet accepted: no access.
    case invited
    /// Accepted: the zone is in the participant's shared database.
    case accepted
}

/// One participant of a zone-wide share.
public struct ShareParticipant: Hashable, Sendable, Codable {
    public var userRecordName: String
    public var permission: SharePermission
    public var status: ParticipantStatus

    public init(userRecordName: String, permission: SharePermission, status: ParticipantStatus = .invited) {
        self.userRecordName = userRecordName
        self.permission = permission
        self.status = status
    }
}

/// A share: zone-wide (at most one per custom zone, the record `cloudkit.zoneshare`) or, with a
/// `rootRecordName`, a record share covering that record and its `parent` descendants.
public struct ZoneShare: Hashable, Sendable {
    public var zoneID: ZoneID
    /// The zone-wide share's own record name, fixed as CloudKit's zone-wide shares have it.
    public static let recordName = "cloudkit.zoneshare"
    /// The share record's name: `recordName` for the zone-wide share, the client's for a record share.
    public var shareRecordName: String = ZoneShare.recordName
    /// The record a record share shares (with its descendants by `parent`); nil: zone-wide.
    public var rootRecordName: String?
    public var ownerName: String { zoneID.ownerName }
    public var publicPermission: SharePermission
    public var participants: [String: ShareParticipant]
    public var changeTag: String
    /// The share's short GUID, the last part of its share URL, by which `records/resolve` and
    /// `records/accept` find it (CloudKit Web Services Reference, "Fetching Record Information
    /// (records/resolve)"). Unguessable: made from the system's random source by whoever saves the
    /// share, never derived from names. Nil for a share saved before this field existed, or by the
    /// simulator; the next save through `records/modify` gives it one.
    public var shortGUID: String?
    /// The share's own fields, those `RecordShare.clientFields` names (its title, thumbnail and
    /// type: the CloudKit framework's `CKShare.SystemFieldKey`), as the owner saved them.
    public var fields: RecordFields = [:]

    public init(zoneID: ZoneID, publicPermission: SharePermission = .none,
                participants: [String: ShareParticipant] = [:], changeTag: String, shortGUID: String? = nil,
                fields: RecordFields = [:]) {
        self.zoneID = zoneID
        self.publicPermission = publicPermission
        self.participants = participants
        self.changeTag = changeTag
        self.shortGUID = shortGUID
        self.fields = fields
    }

    /// A new short GUID: 130 bits of the system's random source in 26 characters of lowercase
    /// base 32 (digits and letters but i, l, o, u), so a share URL cannot be guessed from another.
    public static func newShortGUID() -> String {
        let alphabet = Array("0123456789abcdefghjkmnpqrstvwxyz")
        var rng = SystemRandomNumberGenerator()
        return String((0..<26).map { _ in alphabet[Int(rng.next(upperBound: UInt8(32)))] })
    }

    /// The permission `user` holds once accepted, or nil when the share grants nothing.
    func grantedPermission(for user: String) -> SharePermission? {
        if let p = participants[user] { return p.permission }
        return publicPermission == .none ? nil : publicPermission
    }

    /// The permission `user` may use now: only after acceptance.
    func effectivePermission(for user: String) -> SharePermission? {
        guard let p = participants[user], p.status == .accepted else { return nil }
        return p.permission
    }

    /// Users who accepted and so see the zone in their shared database.
    var acceptedUsers: [String] {
        var users: [String] = []
        for p in participants.values where p.status == .accepted { users.append(p.userRecordName) }
        if users.count > 1 { users.sort() }
        return users
    }
}
