// ffmpeg's verdict on a recording of what a browser sent from its fake camera (`zonertc call --browser
// --browser-sends`, the browser tests): it decodes cleanly, holds at least 95 % of the source's frames, and
// its PSNR against the source is at least 30 dB.
import Foundation
import Media

public enum BrowserRecordingCheck {
    /// ffmpeg's verdict on the recording of what the browser sent: decodes cleanly, ≥ 95 % of the source's
    /// frames, PSNR ≥ 30 dB against it — each recorded frame against the source frame it shows
    /// (`LoopedSourcePSNR`: the camera loops the file and the recording starts somewhere in it).
    /// `scratch` is a directory for the raw pictures (removed once read).
    public static func check(_ recording: String, source: String, scratch: String) -> (ok: Bool, text: String) {
        func ffmpeg(_ arguments: [String]) -> String {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["ffmpeg", "-hide_banner", "-nostdin", "-v", "error"] + arguments
            let pipe = Pipe()
            process.standardError = pipe
            process.standardOutput = FileHandle.nullDevice
            guard (try? process.run()) != nil else { return "cannot run ffmpeg" }
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return String(decoding: data, as: UTF8.self)
        }
        guard case .some((let format, let sourceFrames)) = try? VideoFileSource.read(path: source),
              case .y4m(let header) = format.container, header.width > 0, header.height > 0,
              header.frameRate.numerator > 0, header.frameRate.denominator > 0 else {
            return (false, "FAIL: \(source) is not a Y4M file with a size and frame rate")
        }
        guard case .some((let recordedFormat, let recordedFrames)) = try? VideoFileSource.read(path: recording) else {
            return (false, "FAIL: alice recorded nothing readable at \(recording)")
        }
        // Passthrough: one decoded picture per recorded frame (no frame rate conversion, which would
        // duplicate or drop pictures); the container's time base for the output, else two frames closer
        // than 1/30 s (the guessed rate) collide and the muxer complains of timestamps, not of decoding.
        let passthrough = ["-fps_mode", "passthrough", "-enc_time_base", "-1"]
        let errors = ffmpeg(["-i", recording] + passthrough + ["-f", "null", "-"])
        let raw = { (path: String, out: String) -> [[UInt8]] in
            _ = ffmpeg(["-i", path] + passthrough + ["-vf", "scale=\(header.width):\(header.height)",
                                                     "-pix_fmt", "yuv420p", "-f", "rawvideo", "-y", out])
            let bytes = [UInt8](FileManager.default.contents(atPath: out) ?? Data())
            try? FileManager.default.removeItem(atPath: out)
            let size = header.width * header.height * 3 / 2
            return stride(from: 0, to: bytes.count - size + 1, by: size).map { Array(bytes[$0..<($0 + size)]) }
        }
        let sourcePictures = raw(source, "\(scratch)/source.yuv")
        let recordedPictures = raw(recording, "\(scratch)/recorded.yuv")
        let timebase = recordedFormat.timebase
        let seconds = recordedFrames.prefix(recordedPictures.count).map {
            Double($0.pts) * Double(timebase.numerator) / Double(max(1, timebase.denominator))
        }
        let rate = Double(header.frameRate.numerator) / Double(header.frameRate.denominator)
        let measured = LoopedSourcePSNR.measure(source: sourcePictures, recorded: recordedPictures,
                                                recordedSeconds: seconds, frameRate: rate)
        let (got, sent) = (recordedPictures.count, sourceFrames.count)
        let psnr = measured?.psnr ?? 0
        let ok = errors.isEmpty && sent > 0 && got == recordedFrames.count && got * 100 >= sent * 95 && psnr >= 30
        let span = seconds.last.map { String(format: " over %.2f s", $0) } ?? ""
        return (ok, "\(ok ? "OK" : "FAIL"): alice recorded \(got) frames\(span) from the browser (the source has "
                + "\(sent)), \(recordedFrames.count) in the file, PSNR " + String(format: "%.1f dB", psnr)
                + " against the source (first recorded frame = source frame \(measured?.offset ?? -1))"
                + (errors.isEmpty ? ", no decode errors" : ", decode errors: " + errors.prefix(300)))
    }
}
