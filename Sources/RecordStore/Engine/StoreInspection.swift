import ZoneCore

/// What a store holds, for operators: zones, record counts by type, journal size, tokens.
public struct StoreInspection: Sendable, Codable {
    public struct Zone: Sendable, Codable {
        public var zoneName: String
        public var ownerName: String
        public var records: Int
        public var recordsByType: [String: Int]
        public var tombstones: Int
        public var changeSequence: UInt64
        /// A token for the zone's current state (as a fetch now would return it).
        public var lastToken: String
        public var sharedWith: [String]
    }

    public var zones: [Zone] = []
    public var users: [String] = []
    public var journalBytes = 0
    public var journalEntries = 0
    /// Bytes after the last intact journal entry (an append under way, or a crash's torn tail).
    public var tornBytes = 0
    public var snapshotBytes = 0
    public var generation: UInt64 = 0
}

extension StoreEngine {
    func inspection(now: Instant) -> StoreInspection {
        var report = StoreInspection()
        var users = Set<String>()
        for zone in state.zones.values.sorted(by: { ($0.id.ownerName, $0.id.zoneName) < ($1.id.ownerName, $1.id.zoneName) }) {
            var byType: [String: Int] = [:]
            for r in zone.records.values { byType[r.recordType, default: 0] += 1 }
            let token = ChangeToken(.init(kind: .zone, owner: zone.tokenOwner, incarnation: zone.incarnation,
                                          sequence: zone.sequence, issuedAtMs: now.millisecondsSinceEpoch))
            users.insert(zone.id.ownerName)
            report.zones.append(.init(zoneName: zone.id.zoneName, ownerName: zone.id.ownerName,
                                      records: zone.records.count, recordsByType: byType,
                                      tombstones: zone.tombstones.count, changeSequence: zone.sequence,
                                      lastToken: zone.id.isDefaultZone ? "-" : token.rawValue,
                                      sharedWith: zone.acceptedUsers.sorted()))
        }
        for key in state.databases.keys { users.insert(key.user) }
        report.users = users.sorted()
        return report
    }
}
