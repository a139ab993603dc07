// `zonertc call` on files whose first pts is not 0 (issue #12): made by ffmpeg with
// `-output_ts_offset`, the recording must hold the same frames with the same pts. Raw H.264 and
// Y4M carry no timestamps (their pts are frame numbers), so for them ffmpeg's offset changes no
// byte; H.264 with timestamps is checked in IVF ("H264" FourCC), written here with pts shifted.

import Foundation
import Media
import Testing
import TestSupport

@Suite("zonertc call keeps timestamps", .serialized)
struct CallTimestampProcessTests {
    static func temporaryDirectory() throws -> String {
        let path = NSTemporaryDirectory() + "zonertc-call-ts-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Runs `zonertc call` on `path`; checks the verdict and that the recording holds `path`'s
    /// frames with their pts.
    static func callKeepsFrames(_ path: String, in directory: String) throws {
        let keep = directory + "/keep"
        let run = try ZonertcProcess.run(["call", path, "--pace", "max", "--timeout", "30s", "--keep", keep])
        #expect(run.status == 0, "stdout: \(run.stdout)\nstderr: \(run.stderr)")
        #expect(run.stdout.contains("frames identical"), "\(run.stdout)")
        let (format, sent) = try VideoFileSource.read(path: path)
        let (_, recorded) = try VideoFileSource.read(path: keep + "/bob-received")
        #expect(recorded.map(\.pts) == sent.map(\.pts))
        // Bytes as the codec's canonical form (H.264 start codes normalized), pts and sizes.
        let same = FrameChecksum.of(recorded, codec: format.codec).digest
            == FrameChecksum.of(sent, codec: format.codec).digest
        #expect(same, "the recording's frames differ from the file's")
    }

    static func ffmpegOffset(_ fixture: String, to output: String, _ extra: [String] = []) throws {
        let ffmpeg = try #require(ExternalProgram.path("ffmpeg"), "ffmpeg is required under ZONERTC_CI=1")
        let input = CallProcessTests.fixtures.appendingPathComponent(fixture).path
        let child = try ChildProcess(URL(fileURLWithPath: ffmpeg), [
            "-hide_banner", "-loglevel", "error", "-y", "-i", input] + extra + ["-output_ts_offset", "1", output])
        #expect(child.wait(seconds: 30) == 0, "ffmpeg: \(child.stderr)")
    }

    @Test("ffmpeg -output_ts_offset 1: IVF, Annex B and Y4M come back with the same frames and pts",
          .enabled(if: ExternalProgram.runnable("ffmpeg"), "ffmpeg is not installed (ZONERTC_CI=1 fails instead)"),
          arguments: [("vp8-320x240-60.ivf", "ivf", ["-c", "copy"]),
                      ("h264-320x240-60.h264", "h264", ["-c", "copy"]),
                      ("testsrc-32x24-5.y4m", "y4m", ["-f", "yuv4mpegpipe"])])
    func ffmpegOffsetFile(fixture: String, ext: String, options: [String]) throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = "\(directory)/offset.\(ext)"
        try Self.ffmpegOffset(fixture, to: path, options)
        if ext == "ivf" {
            let (_, frames) = try VideoFileSource.read(path: path)
            #expect(frames.first.map { $0.pts != 0 } == true, "ffmpeg did not offset the pts")
        }
        try Self.callKeepsFrames(path, in: directory)
    }

    @Test("H.264 in IVF starting at pts 90000 (1 s at 1/90000): same frames and pts")
    func h264WithTimestamps() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (_, frames) = try VideoFileSource.read(
            path: CallProcessTests.fixtures.appendingPathComponent("h264-320x240-60.h264").path)
        let header = IVFHeader(fourCC: .h264, width: 320, height: 240, rate: 90_000, scale: 1,
                               frameCount: UInt32(frames.count))
        let shifted = frames.enumerated().map { VideoFrame(bytes: $1.bytes, pts: 90_000 + Int64($0) * 3003) }
        let path = "\(directory)/h264-offset.ivf"
        try Data(VideoFileSink.bytes(format: VideoStreamFormat(container: .ivf(header)), frames: shifted))
            .write(to: URL(fileURLWithPath: path))
        try Self.callKeepsFrames(path, in: directory)
    }
}
