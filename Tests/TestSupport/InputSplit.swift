// The one decoder split check of the tests, in the spirit of swift-nio's
// ByteToMessageDecoderVerifier: an incremental decoder fed its input whole, one byte at a time,
// or cut at seeded random points must give the same result every time (the same frames, the same
// requests, the same error). HTTP, TURN-over-TCP framing, SDP and the video readers all use it.

import ZoneCore

/// How a test cuts a byte stream into the pieces a decoder is fed.
public enum InputSplit: CaseIterable, Sendable, CustomStringConvertible {
    /// One piece.
    case whole
    /// One byte per piece.
    case byteAtATime
    /// Pieces of seeded random lengths below `maxPiece`, some of them empty.
    case random

    /// `bytes` cut this way; `.random` draws its cuts from `seed`.
    public func pieces(_ bytes: [UInt8], seed: UInt64 = 7, maxPiece: Int = 700) -> [ArraySlice<UInt8>] {
        switch self {
        case .whole:
            return [bytes[...]]
        case .byteAtATime:
            return bytes.indices.map { bytes[$0...$0] }
        case .random:
            var random = SeededRandom(seed: seed)
            var pieces: [ArraySlice<UInt8>] = []
            var start = 0
            while start < bytes.count {
                // Empty pieces too: a decoder must take an empty read in its stride.
                let length = Int(random.next() % UInt64(max(1, maxPiece))) + (random.chance(0.3) ? 0 : 1)
                let end = min(bytes.count, start + length)
                pieces.append(bytes[start..<end])
                start = end
            }
            return pieces
        }
    }

    public var description: String {
        switch self {
        case .whole: "whole"
        case .byteAtATime: "a byte at a time"
        case .random: "random splits"
        }
    }

    /// Feeds `input` to `decode` whole, a byte at a time and in `randomRuns` random cuttings
    /// (seeds `seed`, `seed + 1`, …) and describes every cutting whose result differs from the
    /// whole input's: empty when the decoder does not care how its input arrives. Make errors
    /// part of the result (`Result`, an optional) so that they are compared too.
    public static func mismatches<T: Equatable>(
        _ input: [UInt8], seed: UInt64 = 7, randomRuns: Int = 16, maxPiece: Int = 64,
        _ decode: ([ArraySlice<UInt8>]) -> T
    ) -> [String] {
        let whole = decode(InputSplit.whole.pieces(input))
        var found: [String] = []
        if decode(InputSplit.byteAtATime.pieces(input)) != whole {
            found.append("a byte at a time: differs from the whole input's \(whole)")
        }
        for run in 0..<randomRuns {
            let pieces = InputSplit.random.pieces(input, seed: seed &+ UInt64(run), maxPiece: maxPiece)
            if decode(pieces) != whole {
                found.append("split at \(pieces.dropLast().map(\.endIndex)) (seed \(seed &+ UInt64(run))): differs "
                             + "from the whole input's \(whole)")
            }
        }
        return found
    }
}
