import Testing
import ZoneCore

/// `hex128` prints two draws as the zero-padded hex the chunk UUIDs and media IDs were printed
/// with before (so names and traces from a seed stay the same), and draws exactly two values.
@Suite struct SeededRandomHexTests {
    @Test func printsTwoDrawsZeroPadded() {
        var random = SeededRandom(seed: 77)
        var reference = SeededRandom(seed: 77)
        for _ in 0..<200 {
            let expected = [reference.next(), reference.next()].map { word in
                let hex = String(word, radix: 16)
                return String(repeating: "0", count: 16 - hex.count) + hex
            }.joined()
            #expect(random.hex128() == expected)
        }
        #expect(random.next() == reference.next())
        var small = SeededRandom(seed: 0)
        let text = small.hex128()
        #expect(text.utf8.count == 32 && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) })
    }
}
