import Testing
@testable import RecordStore

/// A zone keeps what each user who accepted its share may do, for the shared database's checks:
/// always exactly the share's `effectivePermission`, as the share is set, changed and removed.
@Suite struct AcceptedPermissionTests {
    @Test func theZoneKeepsTheSharesEffectivePermissions() {
        var zone = ZoneState(id: ZoneID(zoneName: "room", ownerName: "_owner"), incarnation: 1, createdAtMs: 0)
        let users = ["_amy", "_zed", "_invited", "_stranger", "_owner", "_renamed", "_other", ""]
        func check(_ why: Comment) {
            for user in users {
                #expect(zone.acceptedPermissions[user] == zone.share?.effectivePermission(for: user), why)
            }
        }
        check("no share")
        var share = ZoneShare(zoneID: zone.id, publicPermission: .readOnly, participants: [
            "_amy": ShareParticipant(userRecordName: "_amy", permission: .readWrite, status: .accepted),
            "_zed": ShareParticipant(userRecordName: "_zed", permission: .readOnly, status: .accepted),
            "_invited": ShareParticipant(userRecordName: "_invited", permission: .readWrite),
            // A participant filed under another name than its own (as a damaged journal could hold):
            // the share answers by the name it is filed under.
            "_renamed": ShareParticipant(userRecordName: "_other", permission: .readWrite, status: .accepted),
        ], changeTag: "1")
        zone.share = share
        #expect(zone.acceptedPermissions == ["_amy": .readWrite, "_zed": .readOnly, "_renamed": .readWrite])
        check("shared")
        share.participants["_invited"]?.status = .accepted
        share.participants["_amy"]?.permission = .readOnly
        zone.share = share
        check("accepted, changed")
        zone.share?.participants["_zed"] = nil
        #expect(zone.acceptedPermissions["_zed"] == nil)
        check("changed in place")
        zone.share = nil
        #expect(zone.acceptedPermissions.isEmpty)
        check("share removed")
    }
}
