/// Which records of a zone refer to which with an action (`DELETE_SELF`, `VALIDATE`): what a
/// delete needs to cascade or to refuse. Kept as records are saved and deleted, live and on
/// replay, and rebuilt from a snapshot's records; references without an action are not kept.
///
/// CloudKit Web Services Reference, "Types and Dictionaries" → Reference Dictionary
/// (developer.apple.com/library/archive/…/CloudKitWebServicesReference/Types.html).
struct ReferenceIndex: Sendable {
    /// How one record refers to another (it may hold several references to it).
    struct Actions: OptionSet, Hashable, Sendable {
        let rawValue: UInt8
        static let deleteSelf = Actions(rawValue: 1)
        static let validate = Actions(rawValue: 2)

        init(rawValue: UInt8) { self.rawValue = rawValue }

        init(_ action: ReferenceAction) {
            switch action {
            case .none: self = []
            case .deleteSelf: self = .deleteSelf
            case .validate: self = .validate
            }
        }
    }

    /// For each target, the records referring to it and how.
    private var referrers: [RecordKey: [RecordKey: Actions]] = [:]

    var isEmpty: Bool { referrers.isEmpty }

    /// The records referring to `target` with an action, and how.
    func referrers(of target: RecordKey) -> [RecordKey: Actions] { referrers[target] ?? [:] }

    /// Records `source`'s references (the record saved under that key).
    mutating func add(_ source: RecordKey, _ record: Record) {
        Self.forEachTarget(of: record) { target, actions in
            referrers[target, default: [:]][source, default: []].formUnion(actions)
        }
    }

    /// Forgets `source`'s references (the record that was saved under that key).
    mutating func remove(_ source: RecordKey, _ record: Record) {
        guard record.fields.mayHoldReferences else { return }
        Self.forEachTarget(of: record) { target, _ in
            guard var sources = referrers[target] else { return }
            sources[source] = nil
            referrers[target] = sources.isEmpty ? nil : sources
        }
    }

    /// Calls `body` with each record `record` refers to with an action in its own zone.
    static func forEachTarget(of record: Record, _ body: (RecordKey, Actions) -> Void) {
        let zone = record.id.zoneID
        for (_, value) in record.fields {
            switch value {
            case .reference, .list:
                value.forEachReference { reference in
                    guard reference.hasAction, reference.recordID.zoneID == zone else { return }
                    body(RecordKey(reference.recordID.recordName), Actions(reference.action))
                }
            default:
                continue
            }
        }
    }
}
