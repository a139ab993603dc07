// Where a peer reaches its room, spec §1 (concern C of seed 001: the reference guessed which
// database held the signal zone and often guessed wrong): owner → private database,
// participant → shared database, resolved once per room and never guessed again.
import RecordStore

/// Whether this peer owns the room's zone or joined it through the share.
public enum RoomRole: Hashable, Sendable {
    /// Created the zone: reaches it through its private database.
    case owner
    /// Accepted the zone-wide share of `ownerUserID`: reaches it through its shared database.
    case participant(ownerUserID: String)
}

/// A room as one peer reaches it: the zone (owner filled in) and the database it lives in for
/// this peer.
public struct RoomBinding: Hashable, Sendable {
    public var roomID: RoomID
    /// The room's zone, `ownerName` filled in.
    public var zone: ZoneID
    /// The database this peer reaches the zone through.
    public var scope: DatabaseScope

    /// The binding for `role`: the one place the database is decided.
    public init(roomID: RoomID, role: RoomRole, myUserID: String) {
        self.roomID = roomID
        switch role {
        case .owner:
            zone = roomID.zoneID(owner: myUserID)
            scope = .private
        case .participant(let owner):
            zone = roomID.zoneID(owner: owner)
            scope = .shared
        }
    }
}
