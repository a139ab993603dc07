/// Which database a request addresses: one of the user's own two, or the container's public one.
public enum DatabaseScope: String, Hashable, Sendable, CaseIterable, Codable {
    /// The user's own zones.
    case `private`
    /// Zones other users shared with this user, after acceptance.
    case shared
    /// The container's one database every user shares: its default zone only (`ZoneID.publicZone`),
    /// readable by anyone (the anonymous reader too), each record writable by its creator alone, as
    /// CloudKit's public database is by default (docs/CLOUDKIT.md, "The public database").
    case `public`
}

/// A record zone: its name and the user who owns it.
///
/// An empty `ownerName` in the private database means "the current user", as
/// `CKCurrentUserDefaultName` does on CloudKit.
public struct ZoneID: Hashable, Sendable, Codable, CustomStringConvertible {
    private struct Names: Hashable, Sendable {
        var zoneName: String
        var ownerName: String
    }

    /// Both names hashed once (`HashedOnce`), when they are set: the store looks zones up by ID
    /// several times per request (zones, change feeds, databases).
    private var key: HashedOnce<Names>

    public var zoneName: String {
        get { key.names.zoneName }
        set { key = HashedOnce(Names(zoneName: newValue, ownerName: ownerName)) }
    }

    public var ownerName: String {
        get { key.names.ownerName }
        set { key = HashedOnce(Names(zoneName: zoneName, ownerName: newValue)) }
    }

    public init(zoneName: String, ownerName: String = "") {
        key = HashedOnce(Names(zoneName: zoneName, ownerName: ownerName))
    }

    private enum CodingKeys: String, CodingKey { case zoneName, ownerName }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(zoneName: try container.decode(String.self, forKey: .zoneName),
                  ownerName: try container.decode(String.self, forKey: .ownerName))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(zoneName, forKey: .zoneName)
        try container.encode(ownerName, forKey: .ownerName)
    }

    /// The name of every private database's default zone.
    public static let defaultZoneName = "_defaultZone"

    /// The default zone of the current user's private database.
    public static let defaultZone = ZoneID(zoneName: defaultZoneName)

    public var isDefaultZone: Bool { zoneName == ZoneID.defaultZoneName }

    /// The owner the public database's zone is stored under: the CloudKit framework's
    /// `CKCurrentUserDefaultName`. No user may be named so (`ReservedNames`), so no private zone
    /// is ever the public one.
    public static let publicOwnerName = ReservedNames.publicOwner

    /// The public database's one zone, as the store keeps it and answers it.
    public static let publicZone = ZoneID(zoneName: defaultZoneName, ownerName: publicOwnerName)

    public var description: String { ownerName.isEmpty ? zoneName : "\(zoneName)@\(ownerName)" }

    /// Appends `description` to `text` (a message sized beforehand is written in one piece).
    func append(to text: inout String) {
        text += zoneName
        if !ownerName.isEmpty {
            text += "@"
            text += ownerName
        }
    }

    /// This ID with the owner filled in where it was left to mean the current user.
    func resolvingOwner(_ user: String) -> ZoneID {
        ownerName.isEmpty ? ZoneID(zoneName: zoneName, ownerName: user) : self
    }
}

/// User names the store keeps for identities of its own: never a registered user's.
public enum ReservedNames {
    /// The owner of the public database's zone.
    public static let publicOwner = "__defaultOwner__"
    /// The identity of a request that may read the public database without a signed-in user
    /// (`RequestContext.anonymous`).
    public static let anonymousReader = "__anonymousReader__"

    /// Whether `name` is one of them.
    public static func contains(_ name: String) -> Bool { name == publicOwner || name == anonymousReader }
}

/// A record's identity: its name within a zone.
public struct RecordID: Hashable, Sendable, Codable, CustomStringConvertible {
    public var recordName: String
    public var zoneID: ZoneID

    public init(recordName: String, zoneID: ZoneID = .defaultZone) {
        self.recordName = recordName
        self.zoneID = zoneID
    }

    public var description: String { "\(recordName) in \(zoneID)" }
}

/// The rules CloudKit applies to names (record names; zone names follow the same shape here).
public enum NameRules {
    /// Longest record name, in ASCII characters.
    public static let maxRecordNameLength = 255

    /// Why `name` is not a valid record name, or nil when it is.
    ///
    /// A record name is ASCII, 1–255 characters, and does not start with `_`.
    public static func recordNameProblem(_ name: String) -> String? {
        let utf8 = name.utf8
        if utf8.isEmpty { return "record name is empty" }
        if utf8.count > maxRecordNameLength {
            return "record name is \(utf8.count) characters long; the limit is \(maxRecordNameLength)"
        }
        if utf8.first == UInt8(ascii: "_") { return "record name '\(name)' starts with '_'" }
        if let bad = firstByte(of: name, outside: 0x20...0x7E) {
            return "record name contains a non-printable or non-ASCII byte 0x\(String(bad, radix: 16))"
        }
        return nil
    }

    /// Why `name` is not a valid custom zone name, or nil when it is.
    public static func zoneNameProblem(_ name: String) -> String? {
        let utf8 = name.utf8
        if utf8.isEmpty { return "zone name is empty" }
        if utf8.count > maxRecordNameLength { return "zone name is longer than \(maxRecordNameLength) characters" }
        if name == ZoneID.defaultZoneName { return nil }
        if utf8.first == UInt8(ascii: "_") { return "zone name '\(name)' starts with '_'" }
        if let bad = firstByte(of: name, outside: 0x21...0x7E) {
            return "zone name contains a space, non-printable or non-ASCII byte 0x\(String(bad, radix: 16))"
        }
        return nil
    }

    /// The first byte of `text`'s UTF-8 outside `allowed`, read from its storage in place where it
    /// is contiguous (every save checks its record's name).
    private static func firstByte(of text: String, outside allowed: ClosedRange<UInt8>) -> UInt8? {
        let inPlace = text.utf8.withContiguousStorageIfAvailable {
            firstByte(of: UnsafeRawBufferPointer($0), outside: allowed)
        }
        if let inPlace { return inPlace }
        return text.utf8.first { !allowed.contains($0) }
    }

    /// The first of `bytes` outside `allowed` (an ASCII range, its upper bound below 0x7F), tested
    /// eight at a time: a word has a byte below the range exactly when subtracting the lower bound
    /// from every byte borrows into a byte whose top bit was clear, and a byte above it exactly when
    /// adding the distance to 0x7F sets some byte's top bit (or it was set). Only a word that has
    /// one is searched byte by byte; a record name runs to dozens of bytes.
    static func firstByte(of bytes: UnsafeRawBufferPointer, outside allowed: ClosedRange<UInt8>) -> UInt8? {
        precondition(allowed.upperBound < 0x7F && allowed.lowerBound > 0, "an ASCII range inside 0x01...0x7E")
        let ones: UInt64 = 0x0101_0101_0101_0101
        let tops: UInt64 = 0x8080_8080_8080_8080
        let below = ones &* UInt64(allowed.lowerBound)
        let toTop = ones &* UInt64(0x7F - allowed.upperBound)
        var at = 0
        while at + 8 <= bytes.count {
            let word = bytes.loadUnaligned(fromByteOffset: at, as: UInt64.self)
            let outside = ((word &- below) & ~word & tops) | (((word &+ toTop) | word) & tops)
            if outside != 0 { break }
            at += 8
        }
        for byte in bytes[at...] where !allowed.contains(byte) { return byte }
        return nil
    }

    /// Why `type` is not a valid record type, or nil when it is.
    public static func recordTypeProblem(_ type: String) -> String? {
        let utf8 = type.utf8
        if utf8.isEmpty { return "record type is empty" }
        if utf8.count > 255 { return "record type is longer than 255 characters" }
        // Read from its storage in place where it is contiguous (every save checks its record's type).
        let ok = utf8.withContiguousStorageIfAvailable { $0.allSatisfy(isRecordTypeByte) }
            ?? utf8.allSatisfy(isRecordTypeByte)
        return ok ? nil : "record type '\(type)' may hold only letters, digits, '_' and '.'"
    }

    /// A letter, a digit, '_' or '.'.
    private static func isRecordTypeByte(_ c: UInt8) -> Bool {
        (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x5F || c == 0x2E
    }
}
