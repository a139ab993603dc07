// libFuzzer entry point for the video containers a peer reads (IVF, H.264 Annex B, Y4M): the
// bytes as each kind of file, read whole and read streaming in two pieces, which must agree; and
// through `VideoFileSource` as a file of each extension. A trap is a bug: a bad file must only
// ever produce a thrown MediaError or VideoFileError.
//
// Built by Fuzz/run-fuzz.sh against the modules listed in `modules`; libFuzzer supplies `main`.

@testable import Media

/// Frames a streaming reader yields from `pieces`, then the error that stopped it, if any.
private func stream<R>(_ reader: inout R, _ pieces: [ArraySlice<UInt8>], append: (inout R, ArraySlice<UInt8>) -> Void,
                       finish: (inout R) -> Void, next: (inout R) throws -> Bool) -> (Int, Bool) {
    var count = 0
    for piece in pieces {
        append(&reader, piece)
        do { while try next(&reader) { count += 1 } } catch { return (count, true) }
    }
    finish(&reader)
    do { while try next(&reader) { count += 1 } } catch { return (count, true) }
    return (count, false)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func containerFuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let split = size > 0 ? Int(bytes[size - 1]) % (size + 1) : 0
    let halves = [bytes[0..<split], bytes[split...]]

    _ = try? IVFReader.read(bytes, maxFrameSize: 1 << 20)
    _ = try? AnnexBReader.read(bytes)
    _ = try? Y4MReader.read(bytes)

    var ivf = IVFReader()
    ivf.maxFrameSize = 1 << 20
    let ivfWhole = stream(&ivf, [bytes[...]], append: { $0.append($1) }, finish: { $0.finish() },
                          next: { try $0.next() != nil })
    var ivf2 = IVFReader()
    ivf2.maxFrameSize = 1 << 20
    let ivfSplit = stream(&ivf2, halves, append: { $0.append($1) }, finish: { $0.finish() },
                          next: { try $0.next() != nil })
    precondition(ivfWhole == ivfSplit, "IVF reading depends on how the bytes arrive")

    var annexB = AnnexBReader()
    let annexBWhole = stream(&annexB, [bytes[...]], append: { $0.append($1) }, finish: { $0.finish() },
                             next: { try $0.next() != nil })
    var annexB2 = AnnexBReader()
    let annexBSplit = stream(&annexB2, halves, append: { $0.append($1) }, finish: { $0.finish() },
                             next: { try $0.next() != nil })
    precondition(annexBWhole == annexBSplit, "Annex B reading depends on how the bytes arrive")

    var y4m = Y4MReader()
    let y4mWhole = stream(&y4m, [bytes[...]], append: { $0.append($1) }, finish: { $0.finish() },
                          next: { try $0.next() != nil })
    var y4m2 = Y4MReader()
    let y4mSplit = stream(&y4m2, halves, append: { $0.append($1) }, finish: { $0.finish() },
                          next: { try $0.next() != nil })
    precondition(y4mWhole == y4mSplit, "Y4M reading depends on how the bytes arrive")

    for name in ["fuzz.ivf", "fuzz.h264", "fuzz.y4m"] {
        if var source = try? VideoFileSource(bytes: bytes, name: name) {
            _ = try? source.readAll()
        }
    }
    return 0
}
