import Testing
import ZoneCore
@testable import RecordStore

/// A database skips writing a zone's status when the zone it last reported changed is reported
/// changed again: its statuses must still be exactly the last report for every zone.
@Suite struct DatabaseStatusTests {
    @Test func statusesAreTheLastReportForEveryZone() {
        let zones = ["a", "b", "c"].map { ZoneID(zoneName: $0, ownerName: "_owner") }
        let kinds: [ZoneChangeKind] = [.changed, .changed, .changed, .deleted, .purged]
        var random = SeededRandom(seed: 11)
        var db = DatabaseState()
        var expected: [ZoneID: ZoneChangeKind] = [:]
        for step in 0..<2000 {
            let zone = zones[Int(random.next() % 3)], kind = kinds[Int(random.next() % 5)]
            if step % 97 == 0 {
                // As a snapshot restores one: the skip must not outlive it.
                db.restoreStatus(kind, of: zone)
            } else {
                db.zoneChanged(zone, kind)
            }
            expected[zone] = kind
            #expect(db.zoneStatus == expected, "step \(step)")
        }
        #expect(db.sequence == 2000 - (2000 + 96) / 97)
    }
}
