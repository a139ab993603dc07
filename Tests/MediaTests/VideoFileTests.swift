// VideoFileSource and VideoFileSink on real files: containers recognized by content or
// extension, frames and pts as the readers give them, files written back byte for byte, and
// truncated or unknown files refused with the offset where they go wrong.

import Foundation
import Testing
import ZoneCore
@testable import Media

private func temporaryPath(_ name: String) -> String {
    NSTemporaryDirectory() + "zonertc-media-\(UInt32.random(in: 0...UInt32.max))-\(name)"
}

@Suite("Video files")
struct VideoFileTests {
    @Test(arguments: ["vp8-320x240-60.ivf", "h264-320x240-60.h264", "testsrc-32x24-5.y4m"])
    func fixturesRoundTripThroughSourceAndSink(name: String) throws {
        let path = Fixture.directory.appendingPathComponent(name).path
        let (format, frames) = try VideoFileSource.read(path: path)
        let listing = try Fixture.frameMD5s(name + ".framemd5")
        #expect(frames.map { md5Hex($0.bytes) } == listing.map(\.md5))
        #expect(frames.map(\.bytes.count) == listing.map(\.size))
        let out = temporaryPath(name)
        defer { try? FileManager.default.removeItem(atPath: out) }
        var sink = try VideoFileSink(path: out, format: format)
        for frame in frames { try sink.write(frame) }
        try sink.finish()
        #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: out))) == (try Fixture.bytes(name)))
        #expect(VideoFileSink.bytes(format: format, frames: frames) == (try Fixture.bytes(name)))
    }

    @Test func formatsAreRecognizedAndDescribed() throws {
        let ivf = try fixtureStream("vp8-320x240-60.ivf").format
        #expect(ivf.codec == .vp8 && ivf.timebase == Timebase(numerator: 1, denominator: 30))
        #expect(ivf.attributeValue == "ivf VP80 320x240 1/30")
        let h264 = try fixtureStream("h264-320x240-60.h264").format
        #expect(h264.codec == .h264 && h264.attributeValue == "h264 1/30")
        let y4m = try fixtureStream("testsrc-32x24-5.y4m").format
        #expect(y4m.codec == .generic && y4m.attributeValue.hasPrefix("y4m W32 H24 F30:1"))
        for format in [ivf, h264, y4m] {
            let back = try VideoStreamFormat(attributeValue: format.attributeValue)
            #expect(back.attributeValue == format.attributeValue && back.codec == format.codec)
        }
        #expect(throws: MediaError.self) { try VideoStreamFormat(attributeValue: "mkv 1/30") }
        #expect(throws: MediaError.self) { try VideoStreamFormat(attributeValue: "ivf VP80 320 1/30") }
        #expect(throws: MediaError.self) { try VideoStreamFormat(attributeValue: "h264 30") }
        // An IVF with another FourCC travels as generic frames.
        var header = IVFHeader(fourCC: .av1, width: 1, height: 1, rate: 30, scale: 1, frameCount: 0)
        #expect(VideoStreamFormat(container: .ivf(header)).codec == .generic)
        header.fourCC = .h264
        #expect(VideoStreamFormat(container: .ivf(header)).codec == .h264)
    }

    @Test func truncatedIVFGivesTheOffsetOfTheBrokenFrame() throws {
        let bytes = try Fixture.bytes("vp8-320x240-60.ivf")
        // Cut inside frame 3: frames 0–2 come out, then the error names frame 3's header offset.
        let frames = try IVFReader.read(bytes).frames
        let frame3 = 32 + frames.prefix(3).reduce(0) { $0 + 12 + $1.bytes.count }
        var source = try VideoFileSource(bytes: Array(bytes[..<(frame3 + 20)]), name: "cut.ivf")
        for _ in 0..<3 { _ = try source.nextFrame() }
        do {
            _ = try source.nextFrame()
            Issue.record("a truncated frame was read")
        } catch {
            #expect(error.kind == .malformed && error.offset == frame3 && error.mediaError?.kind == .truncated)
            #expect(error.description.contains("cut.ivf") && error.description.contains("offset \(frame3)"))
        }
        // A file on disk cut inside its header.
        let path = temporaryPath("short.ivf")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(bytes[..<20]).write(to: URL(fileURLWithPath: path))
        let short = #expect(throws: VideoFileError.self) { try VideoFileSource(path: path) }
        #expect(short?.kind == .malformed && short?.offset == 20)
    }

    @Test func unknownAndMissingFilesAreRefused() throws {
        let unknown = #expect(throws: VideoFileError.self) {
            try VideoFileSource(bytes: Array("hello".utf8), name: "notes.txt")
        }
        #expect(unknown?.kind == .unknownContainer)
        // By extension, then refused by the reader with the offset of the bad bytes.
        let notIVF = #expect(throws: VideoFileError.self) {
            try VideoFileSource(bytes: Array("hello, world, this is not IVF....".utf8), name: "x.ivf")
        }
        #expect(notIVF?.mediaError?.kind == .badMagic && notIVF?.offset == 0)
        let missing = #expect(throws: VideoFileError.self) { try VideoFileSource(path: "/nonexistent/zonertc/x.ivf") }
        #expect(missing?.kind == .cannotOpen)
        // A Y4M frame of the wrong size is refused by the sink, not trapped on.
        let y4m = try fixtureStream("testsrc-32x24-5.y4m").format
        let path = temporaryPath("bad.y4m")
        defer { try? FileManager.default.removeItem(atPath: path) }
        var sink = try VideoFileSink(path: path, format: y4m)
        let mismatch = #expect(throws: VideoFileError.self) { try sink.write(VideoFrame(bytes: [1, 2, 3], pts: 0)) }
        #expect(mismatch?.kind == .frameMismatch)
    }

    @Test func ivfSinkLearnsTheSizeFromAVP8Keyframe() throws {
        let (_, frames) = try fixtureStream("vp8-320x240-60.ivf")
        let header = IVFHeader(fourCC: .vp8, width: 0, height: 0, rate: 90_000, scale: 1, frameCount: 0)
        let path = temporaryPath("learned.ivf")
        defer { try? FileManager.default.removeItem(atPath: path) }
        var sink = try VideoFileSink(path: path, format: VideoStreamFormat(container: .ivf(header)))
        for frame in frames.prefix(3) { try sink.write(frame) }
        try sink.finish()
        let written = try IVFReader.read([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))
        #expect(written.header.width == 320 && written.header.height == 240 && written.header.frameCount == 3)
        #expect(written.frames == Array(frames.prefix(3)))
    }

    @Test func checksumsNormalizeH264StartCodes() throws {
        let units = try AnnexBReader.read(Fixture.bytes("h264-320x240-60.h264"))
        let asFile = units.map(\.frame)
        let asRTP = units.map { VideoFrame(bytes: AnnexBWriter.bytes(for: $0.nalUnits), pts: $0.pts) }
        #expect(asFile.map(\.bytes) != asRTP.map(\.bytes))  // some units had three-byte start codes
        #expect(FrameChecksum.of(asFile, codec: .h264).digest == FrameChecksum.of(asRTP, codec: .h264).digest)
        // For other codecs bytes and pts both count.
        let vp8 = try fixtureStream("vp8-320x240-60.ivf").frames
        var shifted = vp8
        shifted[3].pts += 1
        #expect(FrameChecksum.of(vp8, codec: .vp8).digest != FrameChecksum.of(shifted, codec: .vp8).digest)
        #expect(FrameChecksum.of(vp8, codec: .vp8).frameCRCs == FrameChecksum.of(shifted, codec: .vp8).frameCRCs)
        #expect(FrameChecksum.of(vp8, codec: .vp8).frameCRCs[0] == CRC32.checksum(vp8[0].bytes))
    }
}
