// The order of a group call's members (docs/PROTOCOL.md §11.2): by `joinedAt`, ties by user ID in
// byte order. It decides who offers first in each pair — the later of the two, who on joining
// finds the other's record already there and so needs no round trip to learn it — and who stays
// when more members are present than the room allows: the earliest ones.

/// A member's place in the join order.
public struct JoinOrder: Hashable, Sendable, Comparable {
    /// When the member session joined, milliseconds since 1970.
    public var joinedAtMs: Int64
    /// The member's user ID.
    public var userID: String

    public init(joinedAtMs: Int64, userID: String) {
        self.joinedAtMs = joinedAtMs
        self.userID = userID
    }

    /// The place of `member`.
    public init(_ member: CallMember) {
        self.init(joinedAtMs: member.joinedAtMs, userID: member.userID)
    }

    /// Earlier `joinedAt` first; on a tie the user ID that sorts first byte by byte.
    public static func < (a: JoinOrder, b: JoinOrder) -> Bool {
        a.joinedAtMs != b.joinedAtMs ? a.joinedAtMs < b.joinedAtMs : SessionKey.precedes(a.userID, b.userID)
    }

    /// Whether the member at `self` makes the first offer to the member at `other`: it joined later.
    public func offersFirst(to other: JoinOrder) -> Bool { other < self }
}
