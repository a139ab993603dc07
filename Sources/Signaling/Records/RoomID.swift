// Room identity, spec §1: a room is a record zone named `room_` + 8 characters `[a-z0-9]`.
import RecordStore
import SDP

/// A room's ID, which is also its zone's name and its `Room` record's name.
public struct RoomID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// `room_` and 8 characters from `[a-z0-9]`.
    public let rawValue: String

    /// The fixed prefix of every room ID.
    public static let prefix = "room_"
    /// How many characters follow the prefix.
    public static let suffixLength = 8
    private static let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789".utf8)

    /// Checks `text` against the shape spec §1 gives, a byte at a time (every room
    /// record fetched is checked).
    public init(_ text: String) throws(SignalRecordError) {
        guard text.utf8.count == Self.prefix.utf8.count + Self.suffixLength,
              text.utf8.starts(with: Self.prefix.utf8),
              text.utf8.dropFirst(Self.prefix.utf8.count).allSatisfy(Self.isSuffixCharacter)
        else {
            throw SignalRecordError(
                .invalidRoomID, detail: "room ID \(SDPGrammar.quoted(text, limit: 40)) is not room_ and 8 of [a-z0-9]")
        }
        rawValue = text
    }

    /// `[a-z0-9]`.
    private static func isSuffixCharacter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    /// A fresh room ID drawn from `generator` (a seed reproduces it).
    public static func random(using generator: inout some RandomNumberGenerator) -> RoomID {
        let suffix = (0..<suffixLength).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] }
        return try! RoomID(prefix + String(decoding: suffix, as: UTF8.self))
    }

    /// The room's zone in its owner's private database (`ownerName` empty means "mine").
    public func zoneID(owner: String = "") -> ZoneID {
        ZoneID(zoneName: rawValue, ownerName: owner)
    }

    public static func < (lhs: RoomID, rhs: RoomID) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String { rawValue }
}
