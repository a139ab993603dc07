import Testing
@testable import RecordStore

/// Hashing string parts in place gives what hashing them joined (each ended by a zero byte) gave:
/// zone and database identities inside every change token issued before stay the same.
@Suite struct FNV1aTests {
    @Test func partsHashAsTheirJoinedBytes() {
        for parts in [["zone", "_a11ce", "room_ab12cd34"], ["db", "", "private"], [], ["é", "\u{0}x"]] {
            var joined: [UInt8] = []
            for p in parts { joined += Array(p.utf8) + [0] }
            let expected = FNV1a.hash(joined)
            switch parts.count {
            case 0: #expect(FNV1a.hash() == expected)
            case 2: #expect(FNV1a.hash(parts[0], parts[1]) == expected)
            default: #expect(FNV1a.hash(parts[0], parts[1], parts[2]) == expected)
            }
        }
        #expect(FNV1a.hash([UInt8]()) == 0xcbf2_9ce4_8422_2325, "the offset basis")
    }
}
