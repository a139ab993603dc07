// libFuzzer entry point for the `batch-v1` candidate encoding of docs/SIGNALING.md §2
// (`{"v":1,"candidates":[…],"eoc":false}`): arbitrary bytes as a chunk's `candidate` field. The
// fast path (`canonical`) and the JSON decoder must agree wherever the fast path answers, and a
// batch that reads prints to JSON that reads to the same batch. A trap is a bug: a remote's chunk
// must only ever produce a thrown SignalRecordError.
//
// Built by Fuzz/run-fuzz.sh against the modules listed in `modules`; libFuzzer supplies `main`.

@testable import SDP
@testable import Signaling

@_cdecl("LLVMFuzzerTestOneInput")
public func chunkJSONFuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let text = String(decoding: bytes, as: UTF8.self)
    let batch = try? CandidateBatch(json: text)
    if let fast = CandidateBatch.canonical(text) {
        precondition(batch == fast, "the fast path and the decoder disagree")
    }
    if let batch {
        let printed = batch.json
        precondition((try? CandidateBatch(json: printed)) == batch, "a printed batch does not read back")
        precondition(CandidateBatch.canonical(printed).map { $0 == batch } ?? true, "the fast path misreads ours")
        for candidate in batch.candidates.prefix(32) { _ = try? ICECandidate(parsing: candidate) }
    }
    return 0
}
