extension StoreEngine {
    /// The receipts of every asset file a record holds, in every zone of every database: what
    /// removing unreferenced uploads must keep (`AssetStorage.removeUnreferenced`).
    public var assetReceipts: Set<String> {
        var receipts: Set<String> = []
        for zone in state.zones.values {
            for record in zone.records.values {
                for (_, value) in record.fields {
                    switch value {
                    case .asset(let a): if let r = a.receipt { receipts.insert(r) }
                    case .list(let items):
                        for case .asset(let a) in items { if let r = a.receipt { receipts.insert(r) } }
                    default: break
                    }
                }
            }
        }
        return receipts
    }
}
