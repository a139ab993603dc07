// Where a `Record`'s contents live: one reference-counted box shared by every holder of the record,
// duplicated only when a shared one is changed (copy on write).
//
// A record travels by value through every layer (a request, the store's tables, a change-feed
// page, an inbox, a decoder). Held inline, each of its reference-counted parts (type, name, zone
// and owner names, fields, tag, the two stamps' users and devices, parent, share, short GUID) would be
// retained and released at every hand-over; boxed, a hand-over retains one reference.
//
// The box is a `ManagedBuffer` read through its header's pointer: a class's stored property is
// checked for exclusive access at run time on every read and write, the header's pointer is not.

/// The contents of a record, as `Record` exposes them one by one.
@usableFromInline
struct RecordParts: Hashable, Sendable {
    @usableFromInline var recordType: String
    @usableFromInline var id: RecordID
    @usableFromInline var fields: RecordFields
    @usableFromInline var recordChangeTag: String?
    @usableFromInline var created: RecordStamp?
    @usableFromInline var modified: RecordStamp?
    @usableFromInline var parent: String?
    @usableFromInline var share: String?
    @usableFromInline var shortGUID: String?

    @inlinable
    init(recordType: String, id: RecordID, fields: RecordFields, recordChangeTag: String?,
         created: RecordStamp?, modified: RecordStamp?, parent: String?, share: String?, shortGUID: String?) {
        self.recordType = recordType
        self.id = id
        self.fields = fields
        self.recordChangeTag = recordChangeTag
        self.created = created
        self.modified = modified
        self.parent = parent
        self.share = share
        self.shortGUID = shortGUID
    }
}

/// The box holding one record's parts; never changed while two records share it.
@usableFromInline
final class RecordStorage: ManagedBuffer<RecordParts, Void> {
    @inlinable
    static func make(_ parts: RecordParts) -> RecordStorage {
        let buffer = create(minimumCapacity: 0) { _ in parts }
        // `create` is declared on ManagedBuffer; the object it makes is of the class it was called on.
        return unsafeDowncast(buffer, to: RecordStorage.self)
    }

    /// The parts, in place (valid while this box is alive).
    @inlinable
    var parts: UnsafeMutablePointer<RecordParts> { withUnsafeMutablePointerToHeader { $0 } }

    /// A box of its own holding the same parts.
    @inlinable
    func copy() -> RecordStorage { RecordStorage.make(parts.pointee) }
}
