// Where a `Record`'s contents live: one reference-counted box shared by every copy of the record
// and copied only when a shared copy is changed.
//
// A record travels by value through every layer (a request, the store's tables, a change-feed
// page, an inbox, a decoder), so it is copied often: some 180 times per simulated call. Held
// inline, its reference-counted parts (type, name, zone and owner names, fields, tag, the two
// stamps' users and devices, parent, share) cost a retain and a release each per copy (about 220
// instructions for the first seven alone); in one box a copy is a single retain.
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

    @inlinable
    init(recordType: String, id: RecordID, fields: RecordFields, recordChangeTag: String?,
         created: RecordStamp?, modified: RecordStamp?, parent: String?, share: String?) {
        self.recordType = recordType
        self.id = id
        self.fields = fields
        self.recordChangeTag = recordChangeTag
        self.created = created
        self.modified = modified
        self.parent = parent
        self.share = share
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
