/// What deleting a reference's target does to the record holding the reference.
///
/// CloudKit Web Services Reference, "Types and Dictionaries" → Reference Dictionary
/// (developer.apple.com/library/archive/…/CloudKitWebServicesReference/Types.html):
/// `NONE`, `DELETE_SELF`, `VALIDATE`.
public enum ReferenceAction: String, Hashable, Sendable, CaseIterable {
    /// Nothing happens when the target is deleted.
    case none = "NONE"
    /// Deleting the target deletes the record holding the reference (and, in turn, whatever
    /// refers to that one with `DELETE_SELF`).
    case deleteSelf = "DELETE_SELF"
    /// The target must exist when the reference is saved, and cannot be deleted while a record
    /// refers to it this way (`VALIDATING_REFERENCE_ERROR`).
    case validate = "VALIDATE"
}

/// A `REFERENCE` field value: the record it names and what deleting that record does.
///
/// A reference with an action (`DELETE_SELF`, `VALIDATE`) names a record of its own zone, as
/// CloudKit's references do; one with `NONE` is kept as it is, wherever it points.
public struct Reference: Hashable, Sendable {
    public var recordID: RecordID
    public var action: ReferenceAction

    public init(_ recordID: RecordID, action: ReferenceAction = .none) {
        self.recordID = recordID
        self.action = action
    }

    /// Whether deleting or saving the target is constrained by this reference.
    var hasAction: Bool { action != .none }
}
