import ZoneCore

// Shares as CloudKit Web Services has them: `cloudkit.share` records saved through
// `records/modify` (`modifyRecords`, like any record), found by short GUID through
// `records/resolve` and accepted through `records/accept` (StoreEngine+ShareRecords.swift).
extension EmbeddedStoreClient {
    /// What a short GUID leads to: a share, or a record saved with `createShortGUID`.
    public func resolve(shortGUID: String) async throws -> ResolvedShortGUID {
        try await run(.read) { e, c throws(StoreError) in try e.resolve(shortGUID: shortGUID, c) }
    }

    public func resolveShare(shortGUID: String) async throws -> ResolvedShare {
        try await run(.read) { e, c throws(StoreError) in try e.resolveShare(shortGUID: shortGUID, c) }
    }

    public func acceptShare(shortGUID: String) async throws -> ResolvedShare {
        try await run { e, c throws(StoreError) in try e.acceptShare(shortGUID: shortGUID, c) }
    }
}
