import ZoneCore

/// A records/query `continuationMarker`: where the previous page ended, bound to the query that
/// made it. The server keeps nothing between pages; the marker carries the position (how many
/// records came before, and the last record's zone and name) and a digest of the query, its zones,
/// database and user, so a marker from another query, or made up, is refused rather than read.
///
/// Resuming finds the last record again and goes on after it, so records saved or deleted before
/// that point between two pages neither repeat nor hide records; when the last record itself has
/// gone (or no longer matches), the position count is used.
struct QueryCursor: Equatable {
    /// Records of the answer before the next page.
    var offset: Int
    /// The last record answered: its zone owner, zone name and record name.
    var owner: String
    var zoneName: String
    var recordName: String

    private static let version: UInt8 = 1
    private static let digestSize = 16

    /// What binds a marker to its query. `zones` nil: every zone of the database (`zoneWide`), so
    /// that a zone made or deleted between two pages does not void the marker.
    static func digest(of query: RecordQuery, zones: [ZoneID]?, scope: DatabaseScope, user: String) -> [UInt8] {
        var h = SHA256()
        let searched = zones.map { "\($0.map { "\($0.ownerName)/\($0.zoneName)" })" } ?? "every zone"
        let text = "\(user)\u{0}\(scope)\u{0}\(searched)\u{0}\(query)"
        h.update(Array(text.utf8))
        var out = [UInt8](repeating: 0, count: SHA256.digestSize)
        out.withUnsafeMutableBytes { h.finalize(into: $0) }
        return Array(out.prefix(digestSize))
    }

    func encode(digest: [UInt8]) -> String {
        var bytes: [UInt8] = [Self.version]
        bytes += digest
        withUnsafeBytes(of: UInt64(offset).bigEndian) { bytes += $0 }
        for part in [owner, zoneName] {
            bytes += Array(part.utf8)
            bytes.append(0)
        }
        bytes += Array(recordName.utf8)
        return Base64URL.encode(bytes)
    }

    /// The cursor of `marker`, or `BAD_REQUEST` for one that is malformed or made by another query.
    static func decode(_ marker: String, digest: [UInt8]) throws(StoreError) -> QueryCursor {
        let refused = StoreError(.invalidArguments,
                                 "continuationMarker: not a marker of this query (ask again without one)")
        guard marker.utf8.count <= 4096, let bytes = Base64URL.decode(marker),
              bytes.count >= 1 + digestSize + 8, bytes[0] == version,
              Array(bytes[1...digestSize]) == digest else { throw refused }
        var offset: UInt64 = 0
        for b in bytes[(1 + digestSize)..<(1 + digestSize + 8)] { offset = offset << 8 | UInt64(b) }
        guard offset <= UInt64(Int.max) else { throw refused }
        let rest = bytes[(1 + digestSize + 8)...].split(separator: 0, maxSplits: 2, omittingEmptySubsequences: false)
        guard rest.count == 3,
              let owner = String(validating: rest[0], as: UTF8.self),
              let zone = String(validating: rest[1], as: UTF8.self),
              let name = String(validating: rest[2], as: UTF8.self) else { throw refused }
        return QueryCursor(offset: Int(offset), owner: owner, zoneName: zone, recordName: name)
    }

    /// Where the next page starts in `sorted`, the query's whole answer now.
    func resume(in sorted: [Record]) -> Int {
        if let at = sorted.firstIndex(where: {
            $0.id.recordName == recordName && $0.id.zoneID.zoneName == zoneName && $0.id.zoneID.ownerName == owner
        }) {
            return at + 1
        }
        return min(offset, sorted.count)
    }
}
