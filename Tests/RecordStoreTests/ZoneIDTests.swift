import Foundation
import Testing
@testable import RecordStore

/// A zone ID hashes its names once, when they are set: it must still behave as the pair of names
/// it was — equal and hashed alike whenever the names are, however it came by them — and encode
/// as exactly those names.
@Suite struct ZoneIDTests {
    @Test func equalNamesAreEqualAndHashAlikeHoweverSet() {
        var renamed = ZoneID(zoneName: "other", ownerName: "")
        renamed.zoneName = "room_ab12cd34"
        renamed.ownerName = "_a11ce"
        let made = ZoneID(zoneName: "room_ab12cd34", ownerName: "_a11ce")
        let resolved = ZoneID(zoneName: "room_ab12cd34").resolvingOwner("_a11ce")
        for id in [renamed, resolved] {
            #expect(id == made && id.hashValue == made.hashValue)
        }
        #expect(Set([made, renamed, resolved]).count == 1)
        var zones: [ZoneID: Int] = [made: 1]
        zones[renamed, default: 0] += 1
        #expect(zones == [resolved: 2])
    }

    @Test func differentNamesDiffer() {
        let id = ZoneID(zoneName: "a", ownerName: "b")
        #expect(id != ZoneID(zoneName: "b", ownerName: "a"))
        #expect(id != ZoneID(zoneName: "a", ownerName: ""))
        var changed = id
        changed.ownerName = "c"
        #expect(changed != id && changed == ZoneID(zoneName: "a", ownerName: "c"))
    }

    @Test func encodesAsItsNamesAlone() throws {
        let id = ZoneID(zoneName: "room_ab12cd34", ownerName: "_a11ce")
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = String(decoding: try encoder.encode(id), as: UTF8.self)
        #expect(json == #"{"ownerName":"_a11ce","zoneName":"room_ab12cd34"}"#)
        let decoded = try JSONDecoder().decode(ZoneID.self, from: Data(json.utf8))
        #expect(decoded == id && decoded.hashValue == id.hashValue)
        #expect(throws: DecodingError.self, "both names are needed, as before") {
            try JSONDecoder().decode(ZoneID.self, from: Data(#"{"zoneName":"z"}"#.utf8))
        }
    }
}
