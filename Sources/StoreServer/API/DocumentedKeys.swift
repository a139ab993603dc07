import RecordStore

/// The keys CloudKit Web Services Reference documents for each dictionary of a request this store
/// reads strictly, page by page (developer.apple.com/library/archive/…/CloudKitWebServicesReference/):
/// a key outside them is `BAD_REQUEST` naming it (`WireObject.allowing`). Made once: a request
/// checks several dictionaries, one per field among them.
struct DocumentedKeys: Sendable {
    /// What the dictionary is, for messages ("a record operation").
    let dictionary: String
    let keys: Set<String>
    /// Keys a response carries in such a dictionary, which a client may send back as it fetched
    /// them: accepted, and not read (the server sets them).
    let responseOnly: Set<String>

    init(_ dictionary: String, _ keys: Set<String>, responseOnly: Set<String> = []) {
        self.dictionary = dictionary
        self.keys = keys
        self.responseOnly = responseOnly
    }

    // ModifyRecords.html: the request, the Record Operation Dictionary.
    static let modifyRequest = DocumentedKeys("a records/modify request",
                                              ["operations", "zoneID", "atomic", "desiredKeys", "numbersAsStrings"])
    static let recordOperation = DocumentedKeys("a record operation", ["operationType", "record", "desiredKeys"])

    // Types.html, Record Dictionary: Common Record Keys, Shared Record Request Keys, Share Request
    // Keys; our `zoneID`; the response keys.
    static let record = DocumentedKeys(
        "a record dictionary",
        ["recordName", "recordType", "recordChangeTag", "fields", "zoneID", "parent", "createShortGUID", "forRecord",
         "publicPermission", "participants"],
        responseOnly: ["created", "modified", "deleted", "shortGUID", "share", "owner", "currentUserParticipant"])
    static let parent = DocumentedKeys("a parent", ["recordName"])

    // Types.html: Record Field, Reference, Location, Asset and Zone ID dictionaries.
    static let field = DocumentedKeys("a field dictionary", ["value", "type"])
    static let reference = DocumentedKeys("a reference", ["recordName", "zoneID", "action"])
    static let location = DocumentedKeys("a location", ["latitude", "longitude", "horizontalAccuracy",
                                                        "verticalAccuracy", "altitude", "speed", "course", "timestamp"])
    static let asset = DocumentedKeys("an asset", ["fileChecksum", "size", "referenceChecksum", "wrappingKey",
                                                   "receipt", "downloadURL"])
    static let zoneID = DocumentedKeys("a zone ID", ["zoneName", "ownerRecordName"])

    // LookupRecords.html: the request, the Lookup Record Dictionary (and our `zoneID`).
    static let lookupRequest = DocumentedKeys("a records/lookup request",
                                              ["records", "zoneID", "desiredKeys", "numbersAsStrings"])
    static let lookupRecord = DocumentedKeys("a lookup record dictionary", ["recordName", "desiredKeys", "zoneID"])

    // QueryingRecords.html: the request; Types.html: the Query and Filter dictionaries.
    static let queryRequest = DocumentedKeys("a records/query request",
                                             ["zoneID", "resultsLimit", "query", "continuationMarker", "desiredKeys",
                                              "zoneWide", "numbersAsStrings"])
    static let query = DocumentedKeys("a query", ["recordType", "filterBy", "sortBy"])
    static let filter = DocumentedKeys("a filter dictionary",
                                       ["comparator", "fieldName", "fieldValue", "distance", "systemFieldName"])
    static let sort = DocumentedKeys("a sort descriptor", ["fieldName", "ascending", "relativeLocation"])

    // GettingZonesbyIdentifier.html: the request.
    static let zoneLookupRequest = DocumentedKeys("a zones/lookup request", ["zones"])

    // FetchingRecordZoneChanges(changeszone).html: "A zone dictionary contains all the same keys as
    // this request except zones, and a required zoneID"; the page spells `numberAsStrings`, both
    // spellings are read; `syncToken` names where a zone's feed was left.
    static let zoneChangesOptions: Set<String> = ["reverse", "desiredKeys", "numbersAsStrings", "numberAsStrings",
                                                  "resultsLimit", "desiredRecordTypes"]
    static let zoneChangesRequest = DocumentedKeys("a changes/zone request", zoneChangesOptions.union(["zones"]))
    static let zoneChangesZone = DocumentedKeys("a zone dictionary", zoneChangesOptions.union(["zoneID", "syncToken"]))

    // FetchingDatabaseChanges(changeszone).html.
    static let databaseChangesRequest = DocumentedKeys("a changes/database request", ["syncToken", "resultsLimit"])

    // ModifySubscriptions.html, GetSubscriptions.html, LookupSubscriptionsbyID.html; Types.html:
    // the Subscription and Notification Info dictionaries. Answers carry `deleted` and the error
    // keys beside `subscriptionID`, which a client may send back.
    static let subscriptionsModifyRequest = DocumentedKeys("a subscriptions/modify request", ["operations"])
    static let subscriptionOperation = DocumentedKeys("a subscription operation", ["operationType", "subscription"])
    static let subscription = DocumentedKeys(
        "a subscription dictionary",
        ["subscriptionID", "subscriptionType", "query", "zoneID", "zoneWide", "firesOn", "firesOnce",
         "notificationInfo"])
    static let notificationInfo = DocumentedKeys(
        "a notification info dictionary",
        NotificationInfo.stringKeys.union(["alertLocalizationArgs", "shouldBadge", "shouldSendContentAvailable"]))
    static let subscriptionsListRequest = DocumentedKeys("a subscriptions/list request", [])
    static let subscriptionsLookupRequest = DocumentedKeys("a subscriptions/lookup request", ["subscriptions"])
    static let subscriptionLookup = DocumentedKeys("a subscription lookup", ["subscriptionID"])
}
