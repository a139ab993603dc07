import Foundation
@testable import RecordStore
import ZoneCore

/// A store directory of its own for a test, and the embedded store opened on it with push off and
/// a manual clock, compacting past `compactAt` bytes of journal (small: the next save snapshots).
enum StoreDirectoryFixture {
    static func tempDir(_ purpose: String) -> String {
        let path = NSTemporaryDirectory() + "zonertc-\(purpose)-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    static func open(_ dir: String, compactAt: Int = 64 << 20) throws -> EmbeddedStore {
        var options = EmbeddedStore.Options(directory: dir)
        options.automaticPush = false
        options.compactionThreshold = compactAt
        return try EmbeddedStore(options: options, clock: ManualClock(start: .seconds(1_700_000_000)))
    }
}
