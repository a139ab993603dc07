// The shared split check itself (TestSupport's `InputSplit`): it covers the input exactly, and it
// reports a decoder whose result depends on how its input was cut.

import Testing
import TestSupport

@Suite struct InputSplitTests {
    let input = (0..<500).map { UInt8(truncatingIfNeeded: $0 &* 31) }

    @Test(arguments: InputSplit.allCases)
    func piecesCoverTheInputInOrder(split: InputSplit) {
        let pieces = split.pieces(input, seed: 3, maxPiece: 40)
        #expect(Array(pieces.joined()) == input)
        #expect(pieces.allSatisfy { $0.count < 41 || split == .whole })
        #expect(split.pieces(input, seed: 3, maxPiece: 40) == pieces)  // the seed decides
    }

    @Test func catchesADecoderThatDependsOnTheCuts() {
        #expect(InputSplit.mismatches(input) { $0.reduce(0) { $0 &+ Int($1.first ?? 0) } }.count >= 2)
        #expect(InputSplit.mismatches(input) { Array($0.joined()) } == [])
    }
}
