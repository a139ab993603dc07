// Helpers shared by the Media tests: fixtures located from this file's path, MD5 hex, ffmpeg's
// framemd5 listings, and the whole / byte-at-a-time / random-split feeding of readers.

import Foundation
import ZoneCore
@testable import Media

enum Fixture {
    /// The repository's `Fixtures/` directory, found from this source file's path.
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures")

    static func bytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: directory.appendingPathComponent(name)))
    }

    /// (size, md5) per frame from an `ffmpeg -c copy -f framemd5` listing.
    static func frameMD5s(_ name: String) throws -> [(size: Int, md5: String)] {
        let text = String(decoding: try bytes(name), as: UTF8.self)
        return text.split(separator: "\n").filter { !$0.hasPrefix("#") }.map { line in
            let fields = line.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            return (Int(fields[4])!, fields[5])
        }
    }
}

func md5Hex(_ bytes: [UInt8]) -> String {
    MD5.hash(bytes).map { String(format: "%02x", $0) }.joined()
}

/// Splits `bytes` into pieces: whole, one byte each, or at seeded random points.
enum Split: CaseIterable, Sendable {
    case whole, byteAtATime, random

    func pieces(_ bytes: [UInt8], seed: UInt64 = 7) -> [ArraySlice<UInt8>] {
        switch self {
        case .whole: return [bytes[...]]
        case .byteAtATime: return bytes.indices.map { bytes[$0...$0] }
        case .random:
            var rng = SeededRandom(seed: seed)
            var out: [ArraySlice<UInt8>] = []
            var i = 0
            while i < bytes.count {
                let n = min(bytes.count - i, Int(rng.next() % 700) + (rng.chance(0.3) ? 0 : 1))
                out.append(bytes[i..<i + n])
                i += n
            }
            return out
        }
    }
}
