/// One operation of a `records/modify` request, as CloudKit Web Services Reference, "Modifying
/// Records (records/modify)" → Operation Type Values describes them
/// (developer.apple.com/library/archive/…/CloudKitWebServicesReference/ModifyRecords.html).
///
/// A record given to an operation that may create it needs its `recordType`; one given to
/// `update` or `replace` may leave it empty (the server's type is kept, and naming another is
/// refused). `update` and `replace` need the change tag of the version they change.
public enum RecordOperation: Sendable, Hashable {
    /// Creates a record; when one of that name exists, fails with `serverRecordChanged` carrying
    /// it (CloudKit's "record to insert already exists").
    case create(Record)
    /// Changes only the fields sent (and clears those named in `removing`) of the version the
    /// record's change tag names; everything else stays as the server has it.
    case update(Record, removing: [String] = [])
    /// As `update`, whatever the server's version; creates the record when it does not exist.
    case forceUpdate(Record, removing: [String] = [])
    /// Makes the version the change tag names exactly the record sent: fields not sent are gone.
    case replace(Record)
    /// As `replace`, whatever the server's version; creates the record when it does not exist.
    case forceReplace(Record)
    /// Deletes a record; with a change tag, only the version it names (else `serverRecordChanged`).
    case delete(RecordID, recordChangeTag: String? = nil)
    /// Deletes a record whatever its version.
    case forceDelete(RecordID)

    /// The operation types by their wire names (`operationType`).
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        case create, update, forceUpdate, replace, forceReplace, delete, forceDelete

        /// Whether the operation fails when the record is missing.
        var needsExisting: Bool { self == .update || self == .replace || self == .delete || self == .forceDelete }
        /// Whether the record's change tag must name the server's version.
        var checksTag: Bool { self == .update || self == .replace || self == .delete }
    }

    public var kind: Kind {
        switch self {
        case .create: .create
        case .update: .update
        case .forceUpdate: .forceUpdate
        case .replace: .replace
        case .forceReplace: .forceReplace
        case .delete: .delete
        case .forceDelete: .forceDelete
        }
    }

    /// The record a save sends; nil for a deletion.
    public var record: Record? {
        switch self {
        case .create(let r), .update(let r, _), .forceUpdate(let r, _), .replace(let r), .forceReplace(let r): r
        case .delete, .forceDelete: nil
        }
    }

    /// The record the operation names.
    public var recordID: RecordID {
        switch self {
        case .create(let r), .update(let r, _), .forceUpdate(let r, _), .replace(let r), .forceReplace(let r): r.id
        case .delete(let id, _), .forceDelete(let id): id
        }
    }

    public var isDelete: Bool {
        switch self {
        case .delete, .forceDelete: true
        default: false
        }
    }
}
