import Foundation
import RecordStore

/// CloudKit Web Services' JSON shapes for records, zones, tokens and errors, both ways (CloudKit
/// Web Services Reference, "Types and Dictionaries" and "Error Codes",
/// developer.apple.com/library/archive/…/CloudKitWebServicesReference/Types.html,
/// …/ErrorCodes.html).
///
/// Records and field values: `WireFormat+Records.swift` and `WireFormat+Fields.swift`. Integers out
/// of Int64 are refused naming the field; doubles are written shortest and read exactly
/// (`JSONReader`), so they round-trip bit for bit.
public enum WireFormat {
    public typealias Object = [String: Any]

    /// A request body that does not have the expected shape: `BAD_REQUEST`, the message naming the key.
    public struct ShapeError: Error, CustomStringConvertible, Sendable {
        public var description: String
        public init(_ d: String) { description = d }
    }

    // MARK: Zones

    public static func encode(_ zone: ZoneID) -> Object {
        ["zoneName": zone.zoneName, "ownerRecordName": zone.ownerName]
    }

    /// Zone ID Dictionary: `zoneName` (required), `ownerRecordName` (the current user when left out).
    public static func decodeZoneID(_ any: Any?, context: String = "zoneID") throws -> ZoneID {
        let o = try WireObject(any, at: context, what: #"{"zoneName": …}"#)
        try o.allowing(.zoneID)
        guard let name = try o.string("zoneName") else { throw ShapeError(#"\#(context) needs {"zoneName": …}"#) }
        return ZoneID(zoneName: name, ownerName: try o.string("ownerRecordName") ?? "")
    }

    // MARK: Errors

    /// An error dictionary (ModifyRecords → Record Fetch Error Dictionary; Error Codes): `serverErrorCode`,
    /// `reason`, `uuid`, `retryAfter` when the request may be retried, `recordName` for one record's
    /// failure. Our additions: `ckErrorCode`, the CloudKit framework's name for the kind (it tells
    /// apart kinds Web Services files under one code, e.g. `limitExceeded` under `BAD_REQUEST`), and
    /// `serverRecord`, the server's version of the record on `CONFLICT`.
    public static func encode(_ error: StoreError, recordName: String? = nil) -> Object {
        var o: Object = ["serverErrorCode": error.code.serverErrorCode, "reason": error.message,
                         "ckErrorCode": error.code.rawValue, "uuid": UUID().uuidString]
        if let r = error.retryAfter { o["retryAfter"] = r }
        if let rn = recordName { o["recordName"] = rn }
        if let server = error.serverRecord { o["serverRecord"] = encode(server) }
        return o
    }

    public static func decodeError(_ o: Object) -> StoreError {
        let code = (o["ckErrorCode"] as? String).flatMap(StoreError.Code.init(rawValue:))
            ?? StoreError.Code(serverErrorCode: o["serverErrorCode"] as? String ?? "") ?? .internalError
        var error = StoreError(code, o["reason"] as? String ?? "no reason given")
        error.retryAfter = (o["retryAfter"] as? NSNumber)?.doubleValue
        if let server = o["serverRecord"] { error.serverRecord = try? decodeRecord(server, defaultZone: .defaultZone) }
        return error
    }

    /// The HTTP status of a request-level error: Error Codes' table, and 400 for our
    /// `CHANGE_TOKEN_EXPIRED`.
    public static func status(for code: StoreError.Code) -> Int {
        switch code {
        case .notAuthenticated: return 421
        case .authenticationFailed: return 401
        case .permissionFailure: return 403
        case .zoneNotFound, .unknownItem: return 404
        case .serverRecordChanged, .alreadyExists: return 409
        case .referenceViolation: return 412
        case .requestRateLimited: return 429
        case .serviceUnavailable, .zoneBusy: return 503
        case .internalError: return 500
        case .invalidArguments, .limitExceeded, .changeTokenExpired, .batchRequestFailed: return 400
        }
    }

    // MARK: Shares and subscriptions

    public static func encode(_ share: ZoneShare) -> Object {
        ["zoneID": encode(share.zoneID), "publicPermission": share.publicPermission.rawValue,
         "recordChangeTag": share.changeTag, "shortGUID": share.shortGUID ?? "", "recordName": ZoneShare.recordName,
         "participants": share.participants.values.sorted { $0.userRecordName < $1.userRecordName }.map {
             ["userRecordName": $0.userRecordName, "permission": $0.permission.rawValue,
              "acceptanceStatus": $0.status.rawValue] as Object
         }]
    }

    public static func decodeShare(_ o: Object) throws -> ZoneShare {
        let zone = try decodeZoneID(o["zoneID"])
        var participants: [String: ShareParticipant] = [:]
        for p in o["participants"] as? [Object] ?? [] {
            guard let user = p["userRecordName"] as? String,
                  let permission = SharePermission(rawValue: p["permission"] as? String ?? "") else { continue }
            participants[user] = ShareParticipant(userRecordName: user, permission: permission,
                                                  status: ParticipantStatus(rawValue: p["acceptanceStatus"] as? String ?? "") ?? .invited)
        }
        return ZoneShare(zoneID: zone, publicPermission: SharePermission(rawValue: o["publicPermission"] as? String ?? "") ?? .none,
                         participants: participants, changeTag: o["recordChangeTag"] as? String ?? "",
                         shortGUID: (o["shortGUID"] as? String).flatMap { $0.isEmpty ? nil : $0 })
    }

    /// A Subscription Dictionary of an answer (the remote client's reading of what it saved).
    public static func decodeSubscription(_ any: Any?) throws -> Subscription {
        try StoreAPI.decodeSubscription(WireObject(any, at: "subscription"))
    }

    public static func encode(_ n: PushNotification) -> Object {
        var o: Object = ["notificationID": n.notificationID, "subscriptionID": n.subscriptionID,
                         "databaseScope": n.databaseScope.rawValue]
        if let z = n.zoneID { o["zoneID"] = encode(z) }
        if let name = n.recordName { o["recordName"] = name }
        if let reason = n.queryNotificationReason { o["queryNotificationReason"] = reason.rawValue }
        return o
    }

    public static func decodeNotification(_ o: Object) -> PushNotification? {
        // A UInt64: above Int64.max the reader keeps it as a large integer literal.
        let id = (o["notificationID"] as? JSONLargeInteger).flatMap { UInt64($0.text) }
            ?? int64(o["notificationID"]).flatMap { UInt64(exactly: $0) }
        guard let id, let sub = o["subscriptionID"] as? String,
              let scope = DatabaseScope(rawValue: o["databaseScope"] as? String ?? "") else { return nil }
        return PushNotification(notificationID: id, subscriptionID: sub, databaseScope: scope,
                                zoneID: o["zoneID"] == nil ? nil : try? decodeZoneID(o["zoneID"]),
                                recordName: o["recordName"] as? String,
                                queryNotificationReason: (o["queryNotificationReason"] as? String)
                                    .flatMap(QueryNotificationReason.init(rawValue:)))
    }

    // MARK: JSON bytes

    public static func serialize(_ o: Any) -> [UInt8] { JSONWriter.serialize(o) }

    public static func parseObject(_ bytes: [UInt8]) throws -> Object {
        if bytes.isEmpty { return [:] }
        let value: Any
        do { value = try JSONReader.parse(bytes) } catch { throw ShapeError("the body is not JSON: \(error)") }
        guard let o = value as? Object else { throw ShapeError("the body is not a JSON object") }
        return o
    }
}
