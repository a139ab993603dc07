// Helpers shared by the Media tests: fixtures located from this file's path, MD5 hex, ffmpeg's
// framemd5 listings. Readers are fed whole / a byte at a time / at random splits with the
// TestSupport's `InputSplit`, the one split check of all the tests.

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
    Hex.encode(MD5.hash(bytes))
}
