import SDP

// The session key of a pair of users in a room, spec §1:
// `sessionKey = "<roomID>#<lo>#<hi>"`, lo/hi the two user IDs in byte-wise lexicographic order.

/// The pair of users a call is between, named the same way by both of them.
public struct SessionKey: Hashable, Sendable, CustomStringConvertible {
    /// The room the call is in.
    public let roomID: RoomID
    /// The user ID that sorts first, byte by byte.
    public let lowerUserID: String
    /// The user ID that sorts last.
    public let higherUserID: String
    /// `<roomID>#<lo>#<hi>`: made once, as every record name and every record this peer writes
    /// carries it (printed on each use, it was a string built for every record name).
    public let rawValue: String

    /// The key for `first` and `second` in `roomID`, whichever order they come in.
    ///
    /// User IDs are opaque ASCII (CloudKit user record names look like `_a1b2…`): 1 or more
    /// printable characters (0x21–0x7E), and the two must differ.
    public init(roomID: RoomID, users first: String, _ second: String) throws(SignalRecordError) {
        try Self.validate(userID: first)
        try Self.validate(userID: second)
        guard first != second else {
            throw SignalRecordError(.sameUser, detail: "a session needs two different users, got \(first) twice")
        }
        self.roomID = roomID
        if Self.precedes(first, second) {
            (lowerUserID, higherUserID) = (first, second)
        } else {
            (lowerUserID, higherUserID) = (second, first)
        }
        rawValue = "\(roomID)#\(lowerUserID)#\(higherUserID)"
    }

    public var description: String { rawValue }

    /// The other user of the pair.
    public func otherUser(than user: String) -> String {
        user == lowerUserID ? higherUserID : lowerUserID
    }

    /// Byte-wise lexicographic order of user IDs (spec §1), the order roles are fixed by.
    public static func precedes(_ a: String, _ b: String) -> Bool {
        a.utf8.lexicographicallyPrecedes(b.utf8)
    }

    /// Throws unless `userID` is 1 or more printable ASCII characters without spaces.
    public static func validate(userID: String) throws(SignalRecordError) {
        guard !userID.utf8.isEmpty, userID.utf8.allSatisfy({ $0 >= 0x21 && $0 <= 0x7E }) else {
            throw SignalRecordError(
                .invalidUserID,
                detail: "user ID \(SDPGrammar.quoted(userID, limit: 40)) must be printable ASCII without spaces")
        }
    }
}
