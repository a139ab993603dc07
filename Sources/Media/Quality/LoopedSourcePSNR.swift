// The PSNR of a recording against the file a camera played in a loop (Chromium's fake capture plays its
// Y4M over and over from getUserMedia on, so the recording's first frame is some frame of the file, not
// the first). Each recorded frame is matched to the source frame its timestamp points at: the offset of
// the first one is searched, the others follow from the time since it (a frame the encoder skipped does
// not shift the ones after it).
import Foundation

public enum LoopedSourcePSNR {
    /// What `measure` found.
    public struct Result: Equatable, Sendable {
        /// PSNR in dB over every byte of every recorded frame (all planes), from the mean squared error;
        /// 100 when identical.
        public var psnr: Double
        /// The source frame the first recorded frame shows.
        public var offset: Int
        /// Recorded frames compared.
        public var frames: Int
    }

    /// How many recorded frames decide the offset.
    static let alignmentFrames = 10

    /// `source` and `recorded` are raw pictures of one size (e.g. yuv420p); `recordedSeconds[i]` is the
    /// presentation time of `recorded[i]`, `frameRate` the source's. Nil when there is nothing to compare
    /// or the sizes differ.
    public static func measure(source: [[UInt8]], recorded: [[UInt8]], recordedSeconds: [Double],
                               frameRate: Double) -> Result? {
        guard let size = source.first?.count, size > 0, !recorded.isEmpty, recordedSeconds.count == recorded.count,
              frameRate.isFinite, frameRate > 0,
              source.allSatisfy({ $0.count == size }), recorded.allSatisfy({ $0.count == size }) else { return nil }
        let count = source.count
        // Frames since the first, by time; clamped so hostile timestamps cannot trap the conversion.
        let steps = recordedSeconds.map { seconds -> Int in
            let frames = ((seconds - recordedSeconds[0]) * frameRate).rounded()
            return frames.isFinite ? Int(max(0, min(frames, 1e9))) : 0
        }
        let aligned = min(alignmentFrames, recorded.count)
        var best = (offset: 0, error: UInt64.max)
        for offset in 0..<count {
            var error: UInt64 = 0
            for i in 0..<aligned {
                // Every 7th byte is enough to tell frames of a moving picture apart.
                error &+= squaredError(recorded[i], source[(offset + steps[i]) % count], stride: 7)
            }
            if error < best.error { best = (offset, error) }
        }
        var total: UInt64 = 0
        for (i, frame) in recorded.enumerated() {
            total &+= squaredError(frame, source[(best.offset + steps[i]) % count], stride: 1)
        }
        let mse = Double(total) / (Double(size) * Double(recorded.count))
        let psnr = mse == 0 ? 100 : min(100, 10 * log10(255 * 255 / mse))
        return Result(psnr: psnr, offset: best.offset, frames: recorded.count)
    }

    static func squaredError(_ a: [UInt8], _ b: [UInt8], stride step: Int) -> UInt64 {
        var sum: UInt64 = 0
        a.withUnsafeBufferPointer { a in
            b.withUnsafeBufferPointer { b in
                for index in Swift.stride(from: 0, to: min(a.count, b.count), by: step) {
                    let d = Int(a[index]) - Int(b[index])
                    sum &+= UInt64(d * d)
                }
            }
        }
        return sum
    }
}
