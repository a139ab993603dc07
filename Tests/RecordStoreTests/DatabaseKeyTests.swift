import Testing
@testable import RecordStore

/// A database key hashes its user once, when made: it must behave as the (user, scope) pair it
/// stands for — equal and hashed alike exactly when both are equal, however the name was built —
/// and a zone's kept keys must find the databases its changes reach.
@Suite struct DatabaseKeyTests {
    @Test func equalUsersAndScopesMakeEqualKeys() {
        let user = "_0123456789abcdef0123456789abcdef"
        let built = ["_", "0123456789abcdef", "0123456789abcdef"].joined()
        let a = DatabaseKey(user: user, scope: .private), b = DatabaseKey(user: built, scope: .private)
        #expect(a == b && a.hashValue == b.hashValue && a.tokenOwner == b.tokenOwner)
        #expect(DatabaseKey(user: "é", scope: .shared) == DatabaseKey(user: "e\u{301}", scope: .shared),
                "as the names compare: canonically equivalent")
        var databases: [DatabaseKey: Int] = [a: 1]
        databases[b, default: 0] += 1
        #expect(databases == [a: 2] && databases.keys.first?.user == user)
    }

    @Test func differentUsersOrScopesMakeDifferentKeys() {
        let users = ["a", "b", "ab", "ba", "", "A", "a "] + (0..<200).map { "_u\($0)" }
        let keys = users.flatMap { u in DatabaseScope.allCases.map { DatabaseKey(user: u, scope: $0) } }
        #expect(Set(keys).count == users.count * DatabaseScope.allCases.count)
        #expect(DatabaseKey(user: "x", scope: .private) != DatabaseKey(user: "x", scope: .shared))
        #expect(DatabaseKey(user: "x", scope: .private) != DatabaseKey(user: "y", scope: .private))
    }

    @Test func aZoneKeepsTheKeysOfTheDatabasesItsChangesReach() {
        var zone = ZoneState(id: ZoneID(zoneName: "room", ownerName: "_owner"), incarnation: 1, createdAtMs: 0)
        #expect(zone.ownerDatabase == DatabaseKey(user: "_owner", scope: .private))
        #expect(zone.sharedDatabases.isEmpty)
        let share = ZoneShare(zoneID: zone.id, participants: [
            "_zed": ShareParticipant(userRecordName: "_zed", permission: .readWrite, status: .accepted),
            "_amy": ShareParticipant(userRecordName: "_amy", permission: .readOnly, status: .accepted),
            "_invited": ShareParticipant(userRecordName: "_invited", permission: .readOnly),
        ], changeTag: "1")
        zone.share = share
        #expect(zone.sharedDatabases == [DatabaseKey(user: "_amy", scope: .shared),
                                         DatabaseKey(user: "_zed", scope: .shared)])
        zone.share = nil
        #expect(zone.sharedDatabases.isEmpty)
    }
}
