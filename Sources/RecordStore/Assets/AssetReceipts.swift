import Foundation

/// The check every save of an asset dictionary passes, whatever client and backend it comes
/// through (CloudKit Web Services Reference, "Types and Dictionaries" → Asset Dictionary: the
/// `receipt` "for uploading the asset", with the `fileChecksum` and `size` the upload step
/// returned; developer.apple.com/library/archive/…/CloudKitWebServicesReference/Types.html).
public enum AssetReceipts {
    /// Every asset of `operations` that names a `receipt` must be a file `storage` keeps, with the
    /// checksum and size its upload answered: otherwise `invalidArguments`, and nothing of the
    /// request is applied. (An asset dictionary without a receipt is kept as sent, without a file.)
    /// Each file found is marked kept at `now` (`AssetStorage.touch`), so the sweep of files no
    /// record holds cannot take it between this check and the save's commit.
    public static func check(_ operations: [RecordOperation], in storage: (any AssetStorage)?,
                             now: Date) async throws(StoreError) {
        for operation in operations {
            guard let record = operation.record, record.fields.holdsStructuredValues else { continue }
            for (name, value) in record.fields {
                for asset in assets(in: value) {
                    guard let receipt = asset.receipt else { continue }
                    let kept = StoredAsset.isReceipt(receipt)
                        ? try await storage?.touch(receipt: receipt, now: now) : nil
                    guard let kept else {
                        throw StoreError(.invalidArguments, "field \(name): receipt '\(receipt.prefix(40))' is not "
                                         + "an upload of this store (upload the file through assets/upload)")
                    }
                    guard kept.fileChecksum == asset.fileChecksum, kept.size == asset.size else {
                        throw StoreError(.invalidArguments, "field \(name): fileChecksum and size must be the "
                                         + "upload's (\(kept.fileChecksum), \(kept.size))")
                    }
                }
            }
        }
    }

    private static func assets(in value: FieldValue) -> [Asset] {
        switch value {
        case .asset(let a): return [a]
        case .list(let items): return items.compactMap(\.assetValue)
        default: return []
        }
    }
}
