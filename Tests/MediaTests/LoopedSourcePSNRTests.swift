import Foundation
import Media
import Testing

/// The PSNR of a recording of a looped source: the offset is found, skipped frames do not shift the rest.
@Suite("LoopedSourcePSNR")
struct LoopedSourcePSNRTests {
    /// 12 distinct 8×8 "pictures" from a seeded generator.
    static let source: [[UInt8]] = {
        var state: UInt64 = 7
        return (0..<12).map { _ in
            (0..<64).map { _ in
                state = state &* 6364136223846793005 &+ 1442695040888963407
                return UInt8(truncatingIfNeeded: state >> 56)
            }
        }
    }()

    @Test("a recording starting at frame 9 that wraps round and skips a frame matches exactly: 100 dB")
    func alignsAcrossTheLoopAndSkips() throws {
        let indexes = [9, 10, 11, 0, 2, 3, 4]   // frame 1 skipped by the encoder
        let seconds = [0, 1, 2, 3, 5, 6, 7].map { Double($0) / 30 + 1000 }
        let recorded = indexes.map { Self.source[$0] }
        let result = try #require(LoopedSourcePSNR.measure(source: Self.source, recorded: recorded,
                                                           recordedSeconds: seconds, frameRate: 30))
        #expect(result.psnr == 100 && result.offset == 9 && result.frames == 7)
    }

    @Test("every byte off by 4: PSNR 10·log10(255²/16) = 36.1 dB; the wrong picture is far lower")
    func measuresTheError() throws {
        let noisy = Self.source.map { $0.map { $0 < 128 ? $0 + 4 : $0 - 4 } }
        let seconds = (0..<12).map { Double($0) / 30 }
        let close = try #require(LoopedSourcePSNR.measure(source: Self.source, recorded: noisy,
                                                          recordedSeconds: seconds, frameRate: 30))
        #expect(abs(close.psnr - 10 * log10(255.0 * 255 / 16)) < 0.001 && close.offset == 0)
        let gray = [[UInt8]](repeating: [UInt8](repeating: 128, count: 64), count: 12)
        let far = try #require(LoopedSourcePSNR.measure(source: Self.source, recorded: gray,
                                                        recordedSeconds: seconds, frameRate: 30))
        #expect(far.psnr < 15)   // uniform noise against mid-gray: 10·log10(12) ≈ 10.8 dB
    }

    @Test("nothing to compare, sizes that differ, hostile timestamps: nil or no trap")
    func badInput() {
        #expect(LoopedSourcePSNR.measure(source: [], recorded: [[1]], recordedSeconds: [0], frameRate: 30) == nil)
        #expect(LoopedSourcePSNR.measure(source: [[1, 2]], recorded: [[1]], recordedSeconds: [0], frameRate: 30) == nil)
        #expect(LoopedSourcePSNR.measure(source: [[1]], recorded: [[1]], recordedSeconds: [0], frameRate: 0) == nil)
        let wild = LoopedSourcePSNR.measure(source: Self.source, recorded: [Self.source[0], Self.source[1]],
                                            recordedSeconds: [0, .infinity], frameRate: 30)
        #expect(wild?.frames == 2)
        let huge = LoopedSourcePSNR.measure(source: Self.source, recorded: [Self.source[0], Self.source[1]],
                                            recordedSeconds: [-1e300, 1e300], frameRate: 30)
        #expect(huge?.frames == 2)
    }
}
