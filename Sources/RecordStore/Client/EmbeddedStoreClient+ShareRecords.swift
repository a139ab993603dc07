import ZoneCore

// Shares as CloudKit Web Services has them: `cloudkit.share` records saved through
// `records/modify`, found by short GUID through `records/resolve` and accepted through
// `records/accept` (StoreEngine+ShareRecords.swift).
extension EmbeddedStoreClient {
    public func saveZoneShare(_ save: ZoneShareSave) async throws -> ZoneShare {
        try await run { e, c throws(StoreError) in try e.saveZoneShare(save, c) }
    }

    public func deleteZoneShare(zone: ZoneID, recordChangeTag: String?) async throws {
        try await run { e, c throws(StoreError) in
            try e.deleteZoneShare(zone: zone, recordChangeTag: recordChangeTag, c)
        }
    }

    public func resolveShare(shortGUID: String) async throws -> ResolvedShare {
        try await run(.read) { e, c throws(StoreError) in try e.resolveShare(shortGUID: shortGUID, c) }
    }

    public func acceptShare(shortGUID: String) async throws -> ResolvedShare {
        try await run { e, c throws(StoreError) in try e.acceptShare(shortGUID: shortGUID, c) }
    }
}
