#if PostgreSQL
import Foundation
import RecordStore

/// Asset files in the database (`zonertc_assets`, migration 8), so every daemon on it serves the
/// bytes of an upload any of them took. A row is committed before the upload is answered.
public final class PostgresAssets: AssetStorage {
    private let store: PostgresStore

    public init(store: PostgresStore) { self.store = store }

    @discardableResult
    public func keep(_ asset: StoredAsset, fileAt path: String) async throws(StoreError) -> Bool {
        // Read once into the array that becomes the statement's parameter (libpq copies it to send).
        switch readFileBytes(path) {
        case .success(let bytes)?: return try await keep(asset, bytes: bytes)
        case .failure(let e)?: throw StoreError(.internalError, "cannot read the upload: \(e)")
        case nil: throw StoreError(.internalError, "the upload \(path) is gone")
        }
    }

    @discardableResult
    public func keep(_ asset: StoredAsset, bytes: [UInt8]) async throws(StoreError) -> Bool {
        // A receipt kept already (by any daemon on the database) is a conflict the insert skips.
        try await run(idempotent: false) { conn in
            try conn.query("""
                INSERT INTO zonertc_assets (receipt, file_checksum, size, owner, bytes)
                VALUES ($1, $2, $3::bigint, $4, $5) ON CONFLICT (receipt) DO NOTHING RETURNING receipt
                """, [.text(asset.receipt), .text(asset.fileChecksum), .int8(asset.size), .text(asset.owner),
                      .bytea(bytes)]).count == 1
        }
    }

    public func signingKey() async throws(StoreError) -> [UInt8] {
        let offer = StoredAsset.newSigningKey()
        // The first daemon's key stays; every later one (and a concurrent one) reads it.
        return try await run { conn -> [UInt8] in
            try conn.query("INSERT INTO zonertc_asset_signing_key (id, key) VALUES (1, $1) ON CONFLICT (id) DO NOTHING",
                           [.bytea(offer)])
            let rows = try conn.query("SELECT key FROM zonertc_asset_signing_key WHERE id = 1")
            guard rows.count == 1, let key = rows.rows[0][0], key.count == 32 else {
                throw StoreError(.internalError, "zonertc_asset_signing_key holds no 32-byte key")
            }
            return key
        }
    }

    public func asset(receipt: String) async throws(StoreError) -> StoredAsset? {
        try await run { conn -> StoredAsset? in
            let rows = try conn.query("SELECT file_checksum, size::bigint, owner FROM zonertc_assets WHERE receipt = $1",
                                      [.text(receipt)])
            guard rows.count > 0, let checksum = rows.text(0, 0), let owner = rows.text(0, 2) else { return nil }
            return StoredAsset(receipt: receipt, fileChecksum: checksum, size: try rows.int8(0, 1), owner: owner)
        }
    }

    public func bytes(receipt: String) async throws(StoreError) -> [UInt8]? {
        try await run { conn -> [UInt8]? in
            let rows = try conn.query("SELECT bytes FROM zonertc_assets WHERE receipt = $1", [.text(receipt)])
            return rows.count > 0 ? rows.rows[0][0] : nil
        }
    }

    public func touch(receipt: String, now: Date) async throws(StoreError) -> StoredAsset? {
        // One statement: the row is locked against a concurrent removal, which either took it
        // first (nothing to update) or finds it kept at `now`.
        let ms = Int64((now.timeIntervalSince1970 * 1000).rounded(.down))
        return try await run(idempotent: false) { conn -> StoredAsset? in
            let rows = try conn.query("""
                UPDATE zonertc_assets SET kept_at = GREATEST(kept_at, to_timestamp($2::bigint / 1000.0))
                WHERE receipt = $1 RETURNING file_checksum, size::bigint, owner
                """, [.text(receipt), .int8(ms)])
            guard rows.count > 0, let checksum = rows.text(0, 0), let owner = rows.text(0, 2) else { return nil }
            return StoredAsset(receipt: receipt, fileChecksum: checksum, size: try rows.int8(0, 1), owner: owner)
        }
    }

    public func removeUnreferenced(referenced: Set<String>, keptBefore cutoff: Date) async throws(StoreError) -> Int {
        let seconds = Int64(cutoff.timeIntervalSince1970)
        return try await run(idempotent: false) { conn -> Int in
            let rows = try conn.query("SELECT receipt FROM zonertc_assets WHERE kept_at < to_timestamp($1::bigint)",
                                      [.int8(seconds)])
            var removed = 0
            for row in 0..<rows.count {
                guard let receipt = rows.text(row, 0), !referenced.contains(receipt) else { continue }
                // The age checked again in the deletion: a save may have taken the file since (`touch`).
                let gone = try conn.query("""
                    DELETE FROM zonertc_assets WHERE receipt = $1 AND kept_at < to_timestamp($2::bigint)
                    RETURNING receipt
                    """, [.text(receipt), .int8(seconds)])
                removed += gone.count
            }
            return removed
        }
    }

    private func run<R: Sendable>(idempotent: Bool = true,
                                  _ body: @escaping @Sendable (PostgresConnection) throws -> R) async throws(StoreError) -> R {
        do {
            return try await store.onReader(idempotent: idempotent, body)
        } catch let e as StoreError {
            throw e
        } catch {
            throw StoreError(.internalError, "\(error)")
        }
    }
}
#endif
