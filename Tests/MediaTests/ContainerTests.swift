// IVF, Annex B and Y4M readers and writers: the ffmpeg fixtures (frame counts and per-frame MD5s
// against ffmpeg's framemd5), byte-exact rewrites, incremental feeding in any split, and
// malformed inputs that must fail with a typed error naming the offset.

import Testing
import ZoneCore
@testable import Media
import TestSupport

/// Feeds an IVF reader in pieces and collects everything.
func readIVF(_ pieces: [ArraySlice<UInt8>]) throws(MediaError) -> IVFFile {
    var reader = IVFReader()
    var header: IVFHeader?
    var frames: [VideoFrame] = []
    func drain(_ reader: inout IVFReader) throws(MediaError) {
        while let out = try reader.next() {
            switch out {
            case .header(let h): header = h
            case .frame(let f): frames.append(f)
            }
        }
    }
    for piece in pieces {
        reader.append(piece)
        try drain(&reader)
    }
    reader.finish()
    try drain(&reader)
    return IVFFile(header: header!, frames: frames)
}

func readAnnexB(_ pieces: [ArraySlice<UInt8>]) throws(MediaError) -> [H264AccessUnit] {
    var reader = AnnexBReader(frameRate: 30)
    var out: [H264AccessUnit] = []
    for piece in pieces {
        reader.append(piece)
        while let au = try reader.next() { out.append(au) }
    }
    reader.finish()
    while let au = try reader.next() { out.append(au) }
    return out
}

func readY4M(_ pieces: [ArraySlice<UInt8>]) throws(MediaError) -> Y4MFile {
    var reader = Y4MReader()
    var header: Y4MHeader?
    var frames: [VideoFrame] = []
    func drain(_ reader: inout Y4MReader) throws(MediaError) {
        while let out = try reader.next() {
            switch out {
            case .header(let h): header = h
            case .frame(let f): frames.append(f)
            }
        }
    }
    for piece in pieces {
        reader.append(piece)
        try drain(&reader)
    }
    reader.finish()
    try drain(&reader)
    return Y4MFile(header: header!, frames: frames)
}

func expectError(_ kind: MediaError.Kind, at offset: Int?, _ body: () throws -> Void,
                 sourceLocation: SourceLocation = #_sourceLocation) {
    do {
        try body()
        Issue.record("expected \(kind) at \(offset.map(String.init) ?? "nil")", sourceLocation: sourceLocation)
    } catch let error as MediaError {
        #expect(error.kind == kind, "\(error)", sourceLocation: sourceLocation)
        #expect(error.offset == offset, "\(error)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("untyped error \(error)", sourceLocation: sourceLocation)
    }
}

@Suite("IVF")
struct IVFTests {
    @Test func fixtureMatchesFFmpegAndRewritesByteForByte() throws {
        let bytes = try Fixture.bytes("vp8-320x240-60.ivf")
        let file = try IVFReader.read(bytes)
        #expect(file.header.fourCC == .vp8)
        #expect(file.header.width == 320 && file.header.height == 240)
        #expect(file.header.timebase == Timebase(numerator: 1, denominator: 30))
        let expected = try Fixture.frameMD5s("vp8-320x240-60.ivf.framemd5")
        #expect(file.frames.count == 60 && expected.count == 60)
        for (frame, line) in zip(file.frames, expected) {
            #expect(frame.bytes.count == line.size)
            #expect(md5Hex(frame.bytes) == line.md5)
        }
        #expect(file.frames.map(\.pts) == (0..<60).map(Int64.init))
        #expect(IVFWriter.write(file) == bytes)
    }

    @Test func aHeaderWithADifferentCountStillGivesEveryFrame() throws {
        // ffmpeg puts a duration in the frame-count field; nothing may depend on it.
        var bytes = try Fixture.bytes("vp8-320x240-60.ivf")
        bytes[24] = 7
        let file = try IVFReader.read(bytes)
        #expect(file.header.frameCount == 7 && file.frames.count == 60)
        #expect(IVFWriter.write(file) == bytes)
        var fresh = file
        fresh.header.frameCount = UInt32(file.frames.count)
        let rewritten = IVFWriter.write(fresh)
        #expect(rewritten[24] == 60 && rewritten[28...] == bytes[28...])
        #expect(try IVFReader.read(rewritten).frames == file.frames)
    }

    @Test(arguments: InputSplit.allCases)
    func incrementalReadsGiveTheSameFrames(split: InputSplit) throws {
        let bytes = try Fixture.bytes("vp8-320x240-60.ivf")
        let whole = try IVFReader.read(bytes)
        for seed in 1...3 as ClosedRange<UInt64> {
            #expect(try readIVF(split.pieces(bytes, seed: seed)) == whole)
        }
    }

    @Test func anyFourCCAndHeaderPadding() throws {
        var header = IVFHeader(fourCC: FourCC("AV01"), width: 64, height: 48, rate: 1000, scale: 1, frameCount: 2)
        header.headerSize = 40
        let file = IVFFile(header: header, frames: [VideoFrame(bytes: [1, 2, 3], pts: 0),
                                                    VideoFrame(bytes: [], pts: 33)])
        let bytes = IVFWriter.write(file)
        #expect(bytes.count == 40 + 12 + 3 + 12)
        #expect(try IVFReader.read(bytes) == file)
        #expect(try readIVF(InputSplit.byteAtATime.pieces(bytes)) == file)
    }

    @Test func malformedFilesNameTheOffset() throws {
        let bytes = try Fixture.bytes("vp8-320x240-60.ivf")
        expectError(.truncated, at: 10) { _ = try IVFReader.read(Array(bytes[0..<10])) }
        expectError(.badMagic, at: 0) { _ = try IVFReader.read([0x44, 0x4B, 0x49, 0x47] + bytes[4...]) }
        var small = bytes
        small[6] = 16
        expectError(.malformed, at: 6) { _ = try IVFReader.read(small) }
        // The first frame (5090 bytes at offset 32) cut short.
        expectError(.truncated, at: 32) { _ = try IVFReader.read(Array(bytes[0..<100])) }
        // A frame header cut short right after the first frame.
        expectError(.truncated, at: 32 + 12 + 5090) { _ = try IVFReader.read(Array(bytes[0..<(32 + 12 + 5090 + 5)])) }
        // A frame size beyond the file.
        var big = bytes
        big[32 + 12 + 5090 + 3] = 0x00
        big[32 + 12 + 5090 + 2] = 0x10
        expectError(.truncated, at: 32 + 12 + 5090) { _ = try IVFReader.read(big) }
        // An absurd size.
        big[32 + 12 + 5090 + 3] = 0xFF
        expectError(.tooLarge, at: 32 + 12 + 5090) { _ = try IVFReader.read(big) }
    }
}

@Suite("Annex B")
struct AnnexBTests {
    @Test func fixtureSplitsLikeFFmpeg() throws {
        let bytes = try Fixture.bytes("h264-320x240-60.h264")
        let units = try AnnexBReader.read(bytes)
        let expected = try Fixture.frameMD5s("h264-320x240-60.h264.framemd5")
        #expect(units.count == 60 && expected.count == 60)
        for (au, line) in zip(units, expected) {
            #expect(au.bytes.count == line.size)
            #expect(md5Hex(au.bytes) == line.md5)
        }
        // GOP of 30 with repeat-headers: SPS and PPS in band with every keyframe.
        #expect(units.indices.filter { units[$0].isKeyframe } == [0, 30])
        #expect(units[0].nalUnits.map(\.type).prefix(3) == [7, 8, 6])
        #expect(units[30].nalUnits.first?.type == 7)
        #expect(units.map(\.pts) == (0..<60).map(Int64.init))
        #expect(AnnexBWriter.write(units, preservingInput: true) == bytes)
        // Rebuilt with four-byte start codes, the stream reads back to the same NAL units.
        let rebuilt = try AnnexBReader.read(AnnexBWriter.write(units))
        #expect(rebuilt.map(\.nalUnits) == units.map(\.nalUnits))
    }

    @Test(arguments: InputSplit.allCases)
    func incrementalReadsGiveTheSameAccessUnits(split: InputSplit) throws {
        let bytes = try Fixture.bytes("h264-320x240-60.h264")
        let whole = try AnnexBReader.read(bytes)
        for seed in 1...3 as ClosedRange<UInt64> {
            #expect(try readAnnexB(split.pieces(bytes, seed: seed)) == whole)
        }
    }

    @Test func startCodesAndBoundaries() throws {
        let sps: [UInt8] = [0x67, 1, 2], pps: [UInt8] = [0x68, 3], idr1: [UInt8] = [0x65, 0x88, 9]
        let idr2: [UInt8] = [0x65, 0x22, 9]  // first_mb_in_slice != 0: same picture
        let p: [UInt8] = [0x41, 0x9A, 5]
        let stream: [UInt8] = [0, 0] + [0, 0, 0, 1] + sps + [0, 0, 1] + pps + [0, 0, 1] + idr1 + [0, 0, 1] + idr2
            + [0, 0, 0, 1] + p + [0, 0]
        let units = try AnnexBReader.read(stream)
        #expect(units.map { $0.nalUnits.map(\.bytes) } == [[sps, pps, idr1, idr2], [p]])
        #expect(units[1].bytes == [0, 0, 0, 1] + p + [0, 0])
        for split in InputSplit.allCases {
            #expect(try readAnnexB(split.pieces(stream)) == units)
        }
    }

    @Test func malformedStreamsNameTheOffset() throws {
        expectError(.badMagic, at: 1) { _ = try AnnexBReader.read([0, 7, 0, 0, 1, 0x65, 0x88]) }
        expectError(.malformed, at: 0) { _ = try AnnexBReader.read([0, 0, 1, 0, 0, 1, 0x65]) }
        expectError(.malformed, at: 3) { _ = try AnnexBReader.read([0, 0, 1, 0xE5, 0x88]) }
        #expect(try AnnexBReader.read([0, 0]).isEmpty)  // leading zeros only: an empty stream
        var reader = AnnexBReader(maxNALUnitSize: 10)
        reader.append([0, 0, 1] + [UInt8](repeating: 0x65, count: 20))
        expectError(.tooLarge, at: 0) { _ = try reader.next() }
    }
}

@Suite("Y4M")
struct Y4MTests {
    @Test func fixtureMatchesFFmpegAndRewritesByteForByte() throws {
        let bytes = try Fixture.bytes("testsrc-32x24-5.y4m")
        let file = try Y4MReader.read(bytes)
        #expect(file.header.width == 32 && file.header.height == 24)
        #expect(try file.header.frameSize() == 32 * 24 * 3 / 2)
        let expected = try Fixture.frameMD5s("testsrc-32x24-5.y4m.framemd5")
        #expect(file.frames.count == 5)
        #expect(file.frames.map { md5Hex($0.bytes) } == expected.map(\.md5))
        #expect(Y4MWriter.write(file) == bytes)
        for split in InputSplit.allCases {
            #expect(try readY4M(split.pieces(bytes)) == file)
        }
    }

    @Test func colourSpacesAndMalformedStreams() throws {
        let header = Y4MHeader(width: 3, height: 3, colorSpace: "444p10")
        #expect(try header.frameSize() == 3 * 9 * 2)
        #expect(try Y4MHeader(width: 3, height: 3, colorSpace: "420paldv").frameSize() == 9 + 2 * 4)
        #expect(try Y4MHeader(width: 4, height: 2, colorSpace: "mono").frameSize() == 8)
        let file = Y4MFile(header: header, frames: [VideoFrame(bytes: Array(repeating: 7, count: 54), pts: 0)])
        let bytes = Y4MWriter.write(file)
        #expect(try Y4MReader.read(bytes) == file)
        expectError(.truncated, at: bytes.count - 54 - 6) { _ = try Y4MReader.read(Array(bytes.dropLast())) }
        expectError(.badMagic, at: 0) { _ = try Y4MReader.read(Array("YUV4MPEG3 W2 H2\n".utf8)) }
        expectError(.malformed, at: 0) { _ = try Y4MReader.read(Array("YUV4MPEG2 W2\n".utf8)) }
        expectError(.tooLarge, at: 0) { _ = try Y4MReader.read(Array("YUV4MPEG2 W99999 H2\n".utf8)) }
        expectError(.unsupported, at: 0) { _ = try Y4MReader.read(Array("YUV4MPEG2 W2 H2 Cxyz\n".utf8)) }
        let headerLength = header.serialized().count
        expectError(.badMagic, at: headerLength) { _ = try Y4MReader.read(header.serialized() + Array("FRAMX\n".utf8)) }
    }
}
