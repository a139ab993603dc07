import Foundation
import RecordStore

// Sharing as CloudKit Web Services Reference models it
// (developer.apple.com/library/archive/…/CloudKitWebServicesReference/): a zone's share is the
// record `cloudkit.zoneshare` of type `cloudkit.share`, saved, fetched and deleted with
// records/modify and records/lookup ("Types and Dictionaries": Share Request Keys, the Share
// Participant and User Identity dictionaries); its `shortGUID` and `url` name it to whoever is
// invited; records/resolve ("Fetching Record Information (records/resolve)": ShortGUID and
// ShortGUID Result dictionaries) tells a user what it shares, and records/accept puts its zone in
// the user's shared database. The share itself is the engine's `ZoneShare`, the same one
// `shares/*` (our convenience for peers) reads and writes, planned with the request's records
// (StoreEngine+ZoneSharePlanning.swift). Record shares (a `cloudkit.share`
// under another name, covering a root record and its `parent` children) are records the engine
// plans as shares: StoreAPI+RecordShares.swift.

/// The request keys of the sharing dictionaries (Types.html), beside `DocumentedKeys`' others.
extension DocumentedKeys {
    /// A `cloudkit.share` record of a records/modify request: the Record Dictionary's keys a
    /// share has, and the keys of a share a response carries.
    static let shareRecord = DocumentedKeys(
        "a share record", ["recordName", "recordType", "recordChangeTag", "fields", "zoneID", "publicPermission",
                           "participants", "forRecord"],
        responseOnly: ["created", "modified", "deleted", "shortGUID", "url", "owner", "currentUserParticipant"])
    static let participant = DocumentedKeys("a share participant", ["userIdentity", "permission"],
                                            responseOnly: ["type", "acceptanceStatus", "participantId"])
    static let userIdentity = DocumentedKeys("a user identity", ["userRecordName", "lookupInfo"],
                                             responseOnly: ["nameComponents"])
    static let shortGUIDRequest = DocumentedKeys("a records/resolve or records/accept request", ["shortGUIDs"])
    static let shortGUID = DocumentedKeys("a short GUID dictionary",
                                          ["value", "shouldFetchRootRecord", "rootRecordDesiredKeys"])
}

extension StoreAPI {
    /// The record type of shares.
    static let shareRecordType = "cloudkit.share"

    /// `http://<host>` for the host the request named, when it is a plain host name or address with an
    /// optional port (ASCII letters, digits, `.-:[]`); nil otherwise, so a hostile header never
    /// becomes part of a URL handed to another user.
    static var requestOrigin: String? {
        guard let host = requestHost, !host.isEmpty, host.utf8.allSatisfy({ byte in
            (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A)
                || ".-:[]".utf8.contains(byte)
        }) else { return nil }
        return "http://\(host)"
    }

    /// Whether `path` (split at `/`) is records/resolve or records/accept, which name no zone and
    /// are served in whichever database the request names (Apple's page names `public`).
    static func isShareResolution(_ parts: [String]) -> Bool {
        parts.count == 7 && parts[5] == "records" && (parts[6] == "resolve" || parts[6] == "accept")
    }

    // MARK: records/modify and records/lookup of cloudkit.zoneshare

    /// Whether a record dictionary of a request is the zone-wide share: its name is
    /// `cloudkit.zoneshare`. It is an operation of its request like any other (mixed with records,
    /// atomic with them), which the engine plans as the zone's share
    /// (StoreEngine+ZoneSharePlanning.swift).
    static func isZoneShareRecord(_ record: WireObject) -> Bool {
        record["recordName"] as? String == ZoneShare.recordName
    }

    /// `publicPermission` and `participants` of a share record, each nil when not sent.
    static func readShareKeys(_ record: WireObject) throws -> ShareKeys {
        var keys = ShareKeys()
        if let p = try record.string("publicPermission") {
            guard let permission = sharePermission(p, allowingNone: true) else {
                throw WireFormat.ShapeError("\(record.name("publicPermission")): '\(p)' is not NONE, READ_ONLY or "
                                            + "READ_WRITE")
            }
            keys.publicPermission = permission
        }
        guard record["participants"] != nil else { return keys }
        var participants: [String: SharePermission] = [:]
        for p in try record.objects("participants") {
            try p.allowing(.participant)
            guard let identity = try p.object("userIdentity") else {
                throw WireFormat.ShapeError("\(p.name("userIdentity")) is required")
            }
            try identity.allowing(.userIdentity)
            if identity["lookupInfo"] != nil {
                throw WireFormat.ShapeError("\(identity.name("lookupInfo")): participants are named by "
                                            + "userRecordName (users/discover is not served)")
            }
            let user = try identity.requiredString("userRecordName")
            guard !user.isEmpty else { throw WireFormat.ShapeError("\(identity.name("userRecordName")) is empty") }
            let text = try p.string("permission") ?? "READ_ONLY"
            guard let permission = sharePermission(text, allowingNone: false) else {
                throw WireFormat.ShapeError("\(p.name("permission")): '\(text)' is not READ_ONLY or READ_WRITE")
            }
            guard participants.updateValue(permission, forKey: user) == nil else {
                throw WireFormat.ShapeError("\(identity.name("userRecordName")): \(user) is named twice")
            }
        }
        keys.participants = participants
        return keys
    }

    /// CloudKit's names of a permission (`NONE` only as a public permission).
    static func sharePermission(_ text: String, allowingNone: Bool) -> SharePermission? {
        switch text {
        case "NONE": return allowingNone ? SharePermission.none : nil
        case "READ_ONLY": return .readOnly
        case "READ_WRITE": return .readWrite
        default: return nil
        }
    }

    static func name(of permission: SharePermission) -> String {
        switch permission {
        case .none: return "NONE"
        case .readOnly: return "READ_ONLY"
        case .readWrite: return "READ_WRITE"
        }
    }

    /// The answers to a records/lookup's share records (`cloudkit.zoneshare` of a zone), by their
    /// place in the request.
    func lookupShareRecords(_ ids: [RecordID], renderings: [RecordRendering], scope: DatabaseScope,
                            client: EmbeddedStoreClient) async throws -> [Int: WireFormat.Object] {
        var answers: [Int: WireFormat.Object] = [:]
        for (i, id) in ids.enumerated() where id.recordName == ZoneShare.recordName {
            do {
                let share = try await client.fetchShare(zone: id.zoneID, scope: scope)
                answers[i] = Self.encodeShareRecord(share, for: client.userRecordName, renderings[i])
            } catch let e as StoreError where e.code != .requestRateLimited && e.code != .serviceUnavailable {
                answers[i] = WireFormat.encode(e, recordName: id.recordName)
            }
        }
        return answers
    }

    // MARK: The share record

    /// A share as a record (Types.html, Record Dictionary with the share's keys): `recordName`
    /// `cloudkit.zoneshare`, `recordType` `cloudkit.share`, `shortGUID`, `url`, `publicPermission`,
    /// `owner`, `participants` (the owner first) and `currentUserParticipant` for `user`.
    static func encodeShareRecord(_ share: ZoneShare, for user: String,
                                  _ rendering: RecordRendering = .all) -> WireFormat.Object {
        let owner = encodeParticipant(user: share.ownerName, permission: .readWrite, type: "OWNER", accepted: true)
        var participants = [owner]
        for user in share.participants.keys.sorted() {
            let p = share.participants[user]!
            participants.append(encodeParticipant(user: user, permission: p.permission, type: "PRIVATE_USER",
                                                  accepted: p.status == .accepted))
        }
        var o: WireFormat.Object = [
            "recordName": share.shareRecordName, "recordType": shareRecordType, "recordChangeTag": share.changeTag,
            "zoneID": WireFormat.encode(share.zoneID),
            "publicPermission": name(of: share.publicPermission), "owner": owner, "participants": participants,
        ]
        if let guid = share.shortGUID {
            o["shortGUID"] = guid
            if let url = shareURL(guid) { o["url"] = url }
        }
        if user == share.ownerName {
            o["currentUserParticipant"] = owner
        } else if let p = share.participants[user] {
            o["currentUserParticipant"] = encodeParticipant(user: user, permission: p.permission, type: "PRIVATE_USER",
                                                            accepted: p.status == .accepted)
        }
        var fields = share.fields
        if let desired = rendering.desiredKeys {
            fields = RecordFields(share.fields.lazy.filter { desired.contains($0.key) }.map { ($0.key, $0.value) })
        }
        o["fields"] = WireFormat.encodeFields(fields, numbersAsStrings: rendering.numbersAsStrings)
        return o
    }

    /// Share Participant: `userIdentity`, `permission`, `type`, `acceptanceStatus` (CloudKit JS's
    /// names: `OWNER`/`PRIVATE_USER`/`PUBLIC_USER`, `PENDING`/`ACCEPTED`).
    static func encodeParticipant(user: String, permission: SharePermission, type: String,
                                  accepted: Bool) -> WireFormat.Object {
        ["userIdentity": ["userRecordName": user] as WireFormat.Object, "permission": name(of: permission),
         "type": type, "acceptanceStatus": accepted ? "ACCEPTED" : "PENDING"]
    }

    /// `http://<host>/share/<shortGUID>` for the host the request named; nil without one.
    static func shareURL(_ shortGUID: String) -> String? {
        requestOrigin.map { "\($0)/share/\(shortGUID)" }
    }

    // MARK: records/resolve and records/accept

    /// records/resolve (`accept: false`) and records/accept: one ShortGUID Result Dictionary per
    /// short GUID asked, in order, or its error dictionary (`shortGUID`, `serverErrorCode`,
    /// `reason`) in a 200 answer.
    func resolveShares(_ body: WireObject, accept: Bool,
                       client: EmbeddedStoreClient) async throws -> WireFormat.Object {
        try body.allowing(.shortGUIDRequest)
        let asked = try body.objects("shortGUIDs", required: true)
        guard asked.count <= Self.maxShortGUIDs else {
            throw StoreError(.limitExceeded, "shortGUIDs: at most \(Self.maxShortGUIDs) a request (Data Size Limits)")
        }
        var guids: [(guid: String, root: RecordRendering?)] = []
        for g in asked {
            try g.allowing(.shortGUID)
            let fetchRoot = try g.bool("shouldFetchRootRecord") ?? false
            let keys = try g.strings("rootRecordDesiredKeys")
            guids.append((Self.shortGUID(fromValue: try g.requiredString("value")),
                          fetchRoot ? RecordRendering(desiredKeys: keys) : nil))
        }
        var results: [WireFormat.Object] = []
        for (guid, rootRendering) in guids {
            do {
                let resolved = accept ? .share(try await client.acceptShare(shortGUID: guid))
                                      : try await client.resolve(shortGUID: guid)
                var o: WireFormat.Object
                var root: Record?
                switch resolved {
                case .share(let share):
                    o = Self.encode(share, shortGUID: guid, for: client.userRecordName)
                    root = share.rootRecord
                case .record(let record):
                    o = Self.encode(record, shortGUID: guid)
                    root = record.record
                }
                if let rootRendering, let root { o["rootRecord"] = WireFormat.encode(root, rootRendering) }
                results.append(o)
            } catch let e as StoreError where e.code != .requestRateLimited && e.code != .serviceUnavailable {
                var o = WireFormat.encode(e)
                o["shortGUID"] = guid
                results.append(o)
            }
        }
        return ["results": results]
    }

    /// Short GUIDs in one records/resolve or records/accept (Data Size Limits: 200 items a request).
    static let maxShortGUIDs = 200

    /// The short GUID in a `value`: the value itself, or the last part of a share URL.
    static func shortGUID(fromValue value: String) -> String {
        guard value.contains("/") else { return value }
        return String(value.split(separator: "/").last ?? "")
    }

    /// ShortGUID Result Dictionary of a record saved with `createShortGUID`: no `share`; its zone,
    /// its owner (in the public database, its creator), and what the asking user may do with it as
    /// a participation (`OWNER`; `PRIVATE_USER` for whom a share lets in; `PUBLIC_USER` for anyone
    /// else reading the public database). The record itself is `rootRecord`, when asked for.
    static func encode(_ resolved: ResolvedRecord, shortGUID: String) -> WireFormat.Object {
        let zone = resolved.record.id.zoneID
        let isPublic = zone.ownerName == ZoneID.publicOwnerName
        let owner = isPublic ? resolved.record.created?.userRecordName ?? zone.ownerName : zone.ownerName
        return [
            "shortGUID": shortGUID, "zoneID": WireFormat.encode(zone),
            "ownerIdentity": ["userRecordName": owner] as WireFormat.Object,
            "participantType": resolved.isOwner ? "OWNER" : isPublic ? "PUBLIC_USER" : "PRIVATE_USER",
            "participantStatus": "ACCEPTED", "participantPermission": name(of: resolved.permission),
        ]
    }

    /// ShortGUID Result Dictionary: the share, its zone and owner, and the asking user's
    /// participation. A record share's `rootRecord` is added by the caller when asked for.
    static func encode(_ resolved: ResolvedShare, shortGUID: String, for user: String) -> WireFormat.Object {
        var o: WireFormat.Object = [
            "shortGUID": shortGUID, "share": encodeShareRecord(resolved.share, for: user),
            "zoneID": WireFormat.encode(resolved.share.zoneID),
            "ownerIdentity": ["userRecordName": resolved.share.ownerName] as WireFormat.Object,
        ]
        if resolved.isOwner {
            o["participantType"] = "OWNER"
            o["participantStatus"] = "ACCEPTED"
            o["participantPermission"] = "READ_WRITE"
        } else if let p = resolved.participant {
            o["participantType"] = resolved.share.participants[user] == nil ? "PUBLIC_USER" : "PRIVATE_USER"
            o["participantStatus"] = p.status == .accepted ? "ACCEPTED" : "PENDING"
            o["participantPermission"] = name(of: p.permission)
        }
        return o
    }
}
