/// One effect on the store's state: the unit the journal records and replays.
///
/// Operations validate, then express their effect as mutations; `StoreState.apply` is the
/// only code that changes state, and it does the same thing live and on replay.
enum Mutation: Hashable, Sendable {
    case createZone(ZoneID, incarnation: UInt64, atMs: Int64)
    case deleteZone(ZoneID, purged: Bool)
    /// A complete record as saved: new change tag and stamps included.
    case putRecord(Record)
    /// A record deleted, with the shared roots whose hierarchy held it (`Tombstone.sharedRoots`).
    case deleteRecord(RecordID, recordType: String, atMs: Int64, sharedRoots: [String]? = nil)
    /// A zone-wide share as it now stands (created, participants changed or accepted).
    case putShare(ZoneShare)
    case deleteShare(ZoneID)
    case putSubscription(user: String, scope: DatabaseScope, Subscription)
    case deleteSubscription(user: String, scope: DatabaseScope, subscriptionID: String)
    case registerDevice(user: String, deviceID: String)
    /// A web push token as it now stands (created, or registered).
    case putWebToken(WebPushToken)
    /// A web push token forgotten (its user made one too many).
    case deleteWebToken(digest: String)
}

extension StoreState {
    /// Applies a mutation. Never fails: mutations were validated before they were made.
    /// `recordKey`: the key of the record a record's mutation names, when the caller has it
    /// (an operation that looked the record up); made here from its name otherwise (replay).
    mutating func apply(_ m: Mutation, recordKey: RecordKey? = nil) {
        switch m {
        case let .createZone(id, incarnation, atMs):
            guard zones[id] == nil else { return }
            zones[id] = ZoneState(id: id, incarnation: incarnation, createdAtMs: atMs)
            // Replay reads these from the journal: saturate rather than trap on a damaged maximum.
            nextIncarnation = max(nextIncarnation, incarnation == .max ? .max : incarnation + 1)
            if !id.isDefaultZone {
                databases[DatabaseKey(user: id.ownerName, scope: .private), default: .init()].zoneChanged(id, .changed)
            }
        case let .deleteZone(id, purged):
            guard let zone = zones.removeValue(forKey: id) else { return }
            shortGUIDs.removeZone(zone)
            databases[DatabaseKey(user: id.ownerName, scope: .private), default: .init()]
                .zoneChanged(id, purged ? .purged : .deleted)
            for user in zone.acceptedUsers.sorted() {
                databases[DatabaseKey(user: user, scope: .shared), default: .init()].zoneChanged(id, .deleted)
            }
        case let .putRecord(record):
            if let tag = record.recordChangeTag, let n = UInt64(tag, radix: 16) {
                nextChangeTag = max(nextChangeTag, n == .max ? .max : n + 1)
            }
            // The zone is found once (each lookup hashes its owner and name) and changed at its slot.
            let zoneID = record.id.zoneID
            var slot = zones.index(forKey: zoneID)
            if slot == nil, zoneID.isDefaultZone {
                zones[zoneID] = ZoneState(id: zoneID, incarnation: 0, createdAtMs: 0)
                slot = zones.index(forKey: zoneID)
            }
            guard let slot else { return }
            let shared = RecordShare.isRecordShare(record)
            let before = shared ? zones.values[slot].acceptedUsers : []
            let old = zones.values[slot].put(record, as: Self.key(recordKey, naming: record.id.recordName))
            if ShortGUIDIndex.mayMatter(record) || ShortGUIDIndex.mayMatter(old) {
                shortGUIDs.noteRecord(old: old, new: record)
            }
            if shared { sharedAccessChanged(zoneID, before: before, after: zones.values[slot].acceptedUsers) }
            zoneContentChanged(zoneID, at: slot)
        case let .deleteRecord(id, recordType, atMs, sharedRoots):
            let key = Self.key(recordKey, naming: id.recordName)
            guard let slot = zones.index(forKey: id.zoneID), zones.values[slot].records[key] != nil else { return }
            let shared = recordType == RecordShare.recordType
            let before = shared ? zones.values[slot].acceptedUsers : []
            let old = zones.values[slot].remove(key, Tombstone(recordType: recordType, deletedAtMs: atMs,
                                                                 sharedRoots: sharedRoots))
            if ShortGUIDIndex.mayMatter(old) { shortGUIDs.noteRecord(old: old, new: nil) }
            if shared {
                // Who loses access hears of the zone's deletion after the change that took it away.
                zoneContentChanged(id.zoneID, at: slot)
                sharedAccessChanged(id.zoneID, before: before, after: zones.values[slot].acceptedUsers)
                return
            }
            zoneContentChanged(id.zoneID, at: slot)
        case let .putShare(share):
            guard zones[share.zoneID] != nil else { return }
            if let n = UInt64(share.changeTag, radix: 16) {
                nextChangeTag = max(nextChangeTag, n == .max ? .max : n + 1)
            }
            let before = zones[share.zoneID]!.acceptedUsers
            shortGUIDs.noteZoneShare(share.zoneID, old: zones[share.zoneID]!.share, new: share)
            zones[share.zoneID]!.share = share
            sharedAccessChanged(share.zoneID, before: before, after: zones[share.zoneID]!.acceptedUsers)
        case let .deleteShare(zoneID):
            guard zones[zoneID]?.share != nil else { return }
            let before = zones[zoneID]!.acceptedUsers
            shortGUIDs.noteZoneShare(zoneID, old: zones[zoneID]!.share, new: nil)
            zones[zoneID]!.share = nil
            sharedAccessChanged(zoneID, before: before, after: zones[zoneID]!.acceptedUsers)
        case let .putSubscription(user, scope, subscription):
            databases[DatabaseKey(user: user, scope: scope), default: .init()]
                .subscriptions[subscription.subscriptionID] = subscription
            if scope == .public { publicQueries.put(user: user, subscription) }
        case let .deleteSubscription(user, scope, id):
            databases[DatabaseKey(user: user, scope: scope)]?.subscriptions[id] = nil
            if scope == .public { publicQueries.remove(user: user, subscriptionID: id) }
        case let .registerDevice(user, deviceID):
            devices[user, default: []].insert(deviceID)
        case let .putWebToken(token):
            webTokens.put(token)
        case let .deleteWebToken(digest):
            webTokens.remove(digest)
        }
    }

    /// `given`, the key of the record `name`, or that key made now.
    private static func key(_ given: RecordKey?, naming name: String) -> RecordKey {
        guard let given else { return RecordKey(name) }
        assert(given.name == name, "a record's mutation applied with another record's key")
        return given
    }

    /// A record in `zoneID` (at `slot` in `zones`) changed: the owner's private database and every
    /// accepted participant's shared database report the zone as changed.
    private mutating func zoneContentChanged(_ zoneID: ZoneID, at slot: [ZoneID: ZoneState].Index) {
        guard !zoneID.isDefaultZone else { return }
        let reached = databases(ofZoneAt: slot)
        databases[reached.owner, default: .init()].zoneChanged(zoneID, .changed)
        for key in reached.shared {
            databases[key, default: .init()].zoneChanged(zoneID, .changed)
        }
    }

    /// Users who gained access see the zone appear in their shared database; users who lost it
    /// see it deleted there.
    private mutating func sharedAccessChanged(_ zoneID: ZoneID, before: Set<String>, after: Set<String>) {
        for user in after.subtracting(before).sorted() {
            databases[DatabaseKey(user: user, scope: .shared), default: .init()].zoneChanged(zoneID, .changed)
        }
        for user in before.subtracting(after).sorted() {
            databases[DatabaseKey(user: user, scope: .shared), default: .init()].zoneChanged(zoneID, .deleted)
        }
    }
}

extension StoreState {
    /// The databases a change in the zone at `slot` reaches: its owner's private database and the
    /// shared database of each user who accepted its share (none without a share), read where the
    /// zone sits: the dictionary's getters copy the whole zone (its records, tombstones, feed and
    /// share), its values' modify accessor lends it in place. Called after the zone changed, when
    /// the dictionary is already unique (lending it never copies it).
    mutating func databases(ofZoneAt slot: [ZoneID: ZoneState].Index) -> (owner: DatabaseKey, shared: [DatabaseKey]) {
        Self.databases(of: &zones.values[slot])
    }

    private static func databases(of zone: inout ZoneState) -> (owner: DatabaseKey, shared: [DatabaseKey]) {
        (zone.ownerDatabase, zone.sharedDatabases)
    }
}

extension ZoneState {
    // One mutation of the zone in place: the zone is looked up once per record saved or deleted,
    // not once per field changed (each lookup hashes the zone's owner and name).

    /// Saves `record`, whose key is `key`, as the zone's next change; returns the record it replaced.
    @discardableResult
    mutating func put(_ record: Record, as key: RecordKey) -> Record? {
        sequence += 1
        let old = records.updateValue(record, forKey: key)
        noteShareRecord(key, old: old, new: record)
        // Most zones hold no references with an action: then neither version needs reading.
        if !references.isEmpty, let old { references.remove(key, old) }
        if record.fields.mayHoldReferences { references.add(key, record) }
        // Most zones hold no tombstones; looking one up would cost a lookup all the same.
        if !tombstones.isEmpty { tombstones[key] = nil }
        log.record(key, at: sequence)
        return old
    }

    /// Deletes the record `key` names, leaving `tombstone`, as the zone's next change; returns it.
    @discardableResult
    mutating func remove(_ key: RecordKey, _ tombstone: Tombstone) -> Record? {
        sequence += 1
        let old = records.removeValue(forKey: key)
        noteShareRecord(key, old: old, new: nil)
        if !references.isEmpty, let old { references.remove(key, old) }
        tombstones[key] = tombstone
        log.record(key, at: sequence)
        return old
    }
}
