// The zone-wide share (`cloudkit.zoneshare`, of type `cloudkit.share`) as one operation of a
// records/modify request among any others (CloudKit Web Services Reference, "Modifying Records
// (records/modify)" and "Types and Dictionaries" → Share Request Keys;
// developer.apple.com/library/archive/…/CloudKitWebServicesReference/ModifyRecords.html,
// …/Types.html). The share is kept beside its zone (`ZoneState.share`, journalled as `putShare`
// and `deleteShare`), yet its save is planned with the request's records, in the zone's place:
// in an atomic request it is applied with them or not at all, and its changes join the request's
// one journal entry.
import ZoneCore

extension StoreEngine {
    /// The zone's zone-wide share as the operations planned so far leave it.
    func zoneShare(of zone: ZoneID, _ planned: PlannedChanges) -> ZoneShare? {
        if let version = planned.zoneShares[zone] { return version }
        return state.zones[zone]?.share
    }

    /// Plans a save of the zone-wide share with the tag rules of record saves. `sent` holds the
    /// share's keys as `RecordShare.fields(of:)` writes them, only those the request sent (an
    /// `update` changes only those). Participants who accepted and stay keep their acceptance;
    /// the short GUID is kept once made.
    func planZoneShareSave(_ kind: RecordOperation.Kind, _ sent: Record, removing: [String] = [],
                           scope: DatabaseScope, _ planned: PlannedChanges, _ ctx: RequestContext) -> ItemPlan {
        var id = sent.id
        var zone: ZoneID?
        do throws(StoreError) {
            let resolved = try resolveShareZone(sent.id.zoneID, scope: scope, ctx)
            zone = resolved
            id = RecordID(recordName: ZoneShare.recordName, zoneID: resolved)
            guard let wanted = RecordShare.zoneShare(in: sent) else {
                throw StoreError(.invalidArguments, "\(ZoneShare.recordName) is of type \(RecordShare.recordType), "
                                 + "not \(sent.recordType)")
            }
            let existing = zoneShare(of: resolved, planned)
            switch (kind, existing) {
            case (.create, .some):
                throw StoreError(.serverRecordChanged, "zone \(resolved) already has a zone-wide share "
                                 + "(\(ZoneShare.recordName))")
            case (.update, nil), (.replace, nil):
                throw StoreError(.unknownItem, "zone \(resolved) has no share to \(kind.rawValue)")
            case (.update, .some(let share)), (.replace, .some(let share)):
                guard let tag = sent.recordChangeTag else {
                    throw StoreError(.invalidArguments, "recordChangeTag is required to \(kind.rawValue) a share")
                }
                guard tag == share.changeTag else {
                    throw StoreError(.serverRecordChanged,
                                     "the share of \(resolved) is at change tag \(share.changeTag), not \(tag)")
                }
            default: break
            }
            let replacing = kind == .create || kind == .replace || kind == .forceReplace || existing == nil
            let sentKeys = RecordShare.sentKeys(in: sent)
            var share = existing ?? ZoneShare(zoneID: resolved, changeTag: "")
            if share.shortGUID == nil { share.shortGUID = wanted.shortGUID }
            if sentKeys.publicPermission {
                share.publicPermission = wanted.publicPermission
            } else if replacing {
                share.publicPermission = .none
            }
            if sentKeys.participants || replacing {
                var participants: [String: ShareParticipant] = [:]
                for (user, p) in wanted.participants where user != ctx.user {
                    // Accepted under a public permission or as a participant: the acceptance stands.
                    let status = share.participants[user]?.status ?? .invited
                    participants[user] = ShareParticipant(userRecordName: user, permission: p.permission,
                                                          status: status)
                }
                share.participants = participants
            }
            // Its own fields as a record's: an update changes those sent (and clears `removing`).
            if replacing {
                share.fields = wanted.fields
            } else {
                share.fields = share.fields.merging(wanted.fields)
                for name in removing { share.fields[name] = nil }
            }
            let size = share.fields.dataSize
            if size > configuration.maxRecordBytes {
                throw StoreError(.limitExceeded, "the share of \(resolved) would hold \(size) bytes of fields; the "
                                 + "limit is \(configuration.maxRecordBytes)")
            }
            return ItemPlan(id: id, zone: resolved, outcome: .saveZoneShare(share))
        } catch {
            return ItemPlan(id: id, zone: zone, outcome: .failed(error))
        }
    }

    /// Plans the deletion of the zone-wide share (`delete` checks the tag when given).
    func planZoneShareDelete(_ given: RecordID, tag: String?, scope: DatabaseScope,
                             _ planned: PlannedChanges, _ ctx: RequestContext) -> ItemPlan {
        var id = given
        var zone: ZoneID?
        do throws(StoreError) {
            let resolved = try resolveShareZone(given.zoneID, scope: scope, ctx)
            zone = resolved
            id = RecordID(recordName: ZoneShare.recordName, zoneID: resolved)
            guard let share = zoneShare(of: resolved, planned) else {
                throw StoreError(.unknownItem, "zone \(resolved) has no share")
            }
            if let tag, tag != share.changeTag {
                throw StoreError(.serverRecordChanged,
                                 "the share of \(resolved) is at change tag \(share.changeTag), not \(tag)")
            }
            return ItemPlan(id: id, zone: resolved, outcome: .deleteZoneShare(resolved))
        } catch {
            return ItemPlan(id: id, zone: zone, outcome: .failed(error))
        }
    }

    /// The zone a share operation names: a custom zone of the user's own private database.
    private func resolveShareZone(_ zone: ZoneID, scope: DatabaseScope,
                                  _ ctx: RequestContext) throws(StoreError) -> ZoneID {
        guard scope == .private else {
            throw StoreError(.permissionFailure, "only the owner saves a share, in the private database; a "
                             + "participant leaves with zones/modify delete in the shared database")
        }
        if zone.isDefaultZone {
            throw StoreError(.invalidArguments, "the default zone cannot be shared: share a custom zone")
        }
        return try resolveZone(zone, scope: .private, access: .write, ctx)
    }
}
