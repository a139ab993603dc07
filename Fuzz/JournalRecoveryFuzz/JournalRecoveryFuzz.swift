// libFuzzer entry point for journal recovery: arbitrary bytes as a journal file through the scan
// recovery does and the salvage `store repair` does, and every entry that passes its checksum
// decoded and replayed onto a store engine. The first input byte picks the mode: even, the rest is
// a journal file as found on disk; odd, the rest is framed as one entry with a correct CRC after a
// valid header, so the mutation decoder and replay see hostile payloads too. A trap here is a bug:
// a damaged journal must only ever be refused, repaired or read.
//
// Built by Fuzz/run-fuzz.sh from the modules listed in `modules`; libFuzzer supplies `main`.
@testable import RecordStore
import ZoneCore

@_cdecl("LLVMFuzzerTestOneInput")
public func journalRecoveryFuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = Array(UnsafeRawBufferPointer(start: data, count: size))
    guard let mode = input.first else { return 0 }
    var file: [UInt8]
    if mode & 1 == 0 {
        file = Array(input.dropFirst())
    } else {
        file = JournalFormat.header(generation: 0)
        if input.count > 1 { JournalFormat.frame(Array(input.dropFirst()), into: &file) }
    }

    var engine = StoreEngine(configuration: .default)
    if let scan = try? JournalFormat.scan(file) {
        precondition(scan.validLength + scan.tornBytes == file.count, "scan lost track of bytes")
        if let damage = scan.damage {
            precondition(damage.offset == scan.validLength && damage.nextIntactEntry > damage.offset,
                         "damage reported where the scan did not stop")
        }
        for payload in scan.entries {
            var reader = ByteReader(Array(payload))
            if let mutations = try? MutationCodec.decodeMutations(&reader) {
                for m in mutations { engine.replay(m) }
            }
        }
        if let salvage = try? JournalSalvage(file) {
            // Salvage keeps at least what recovery reads, and what it writes back scans clean.
            precondition(salvage.entries.count >= scan.entries.count, "salvage kept less than the scan")
            let rewritten = try! JournalFormat.scan(salvage.repairedJournal)
            precondition(rewritten.damage == nil && rewritten.tornBytes == 0, "a repaired journal is damaged")
            precondition(rewritten.entries.map(Array.init) == salvage.entries.map(Array.init),
                         "a repaired journal does not hold what was salvaged")
            let dropped = salvage.dropped.reduce(0) { $0 + $1.bytes }
            let kept = salvage.entries.reduce(0) { $0 + $1.count + JournalFormat.entryHeaderSize }
            precondition(JournalFormat.headerSize + kept + dropped == file.count, "salvage lost track of bytes")
        }
    }
    _ = engine.inspection(now: .seconds(0))
    return 0
}
