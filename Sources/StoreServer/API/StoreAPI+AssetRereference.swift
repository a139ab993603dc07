import RecordStore

// assets/rereference as CloudKit Web Services Reference documents it: "Referencing Existing Assets
// (assets/rereference)" (developer.apple.com/library/archive/…/CloudKitWebServicesReference/
// RereferenceAssets.html). A client names asset fields of records it can read (`zoneID`, `assets`:
// Assets Field Dictionaries of `recordName` and `fieldName`) and is answered one Asset Dictionary
// per field, which it may save into another record's asset field: the file then has two records,
// and goes only when neither holds it (the sweep, StoreAPI+Assets.swift).

extension DocumentedKeys {
    static let assetRereferenceRequest = DocumentedKeys("an assets/rereference request", ["zoneID", "assets"])
    static let assetsField = DocumentedKeys("an assets field dictionary", ["recordName", "fieldName"])
}

extension StoreAPI {
    /// `assets/rereference`: `{"assets": [...]}`, one per field asked in order — the Asset
    /// Dictionary with the `receipt` a save needs (and the `downloadURL`), or an error dictionary
    /// (`recordName`, `serverErrorCode`, `reason`) for a record not found or a field that holds no
    /// kept asset file.
    func rereferenceAssets(_ body: WireObject, scope: DatabaseScope,
                           client: EmbeddedStoreClient) async throws -> WireFormat.Object {
        try body.allowing(.assetRereferenceRequest)
        let zone = try body["zoneID"].map { try WireFormat.decodeZoneID($0) } ?? .defaultZone
        let asked = try body.objects("assets", required: true)
        guard !asked.isEmpty else { throw WireFormat.ShapeError("assets: name at least one asset field") }
        guard asked.count <= AssetRoutes.maxTokens else {
            throw StoreError(.limitExceeded, "assets: at most \(AssetRoutes.maxTokens) a request (Data Size Limits)")
        }
        var fields: [(id: RecordID, field: String)] = []
        for a in asked {
            try a.allowing(.assetsField)
            fields.append((RecordID(recordName: try a.requiredString("recordName"), zoneID: zone),
                           try a.requiredString("fieldName")))
        }
        let found = try await client.lookupRecords(fields.map(\.id), scope: scope)
        var answers: [WireFormat.Object] = []
        for ((id, field), result) in zip(fields, found) {
            switch result {
            case .failed(_, let e):
                answers.append(WireFormat.encode(e, recordName: id.recordName))
            case .found(let record):
                guard case .asset(let asset)? = record.fields[field], let receipt = asset.receipt,
                      StoredAsset.isReceipt(receipt) else {
                    answers.append(WireFormat.encode(StoreError(
                        .invalidArguments, "field \(field) of record \(id.recordName) holds no uploaded asset file "
                        + "(one ASSET or ASSETID with a file; lists are not rereferenced)"),
                        recordName: id.recordName))
                    continue
                }
                var o = WireFormat.encode(asset)
                o["receipt"] = receipt
                answers.append(o)
            }
        }
        return ["assets": answers]
    }
}
