/// What a save checks in each value it is given: what the wire format cannot rule out, and what
/// a Swift caller can build but CloudKit would refuse.
extension FieldValue {
    /// A list, reference, location or asset: a value with parts to check (a string or a number
    /// has none).
    var isStructured: Bool {
        switch self {
        case .string, .int64, .double, .timestamp, .bytes: false
        case .reference, .location, .asset, .list, .emptyList: true
        }
    }

    /// A reference, or a list that may hold references.
    var mayHoldReferences: Bool {
        switch self {
        case .reference, .list: true
        default: false
        }
    }

    /// Why this value cannot be saved in field `name`, or nil.
    func problem(field name: String) -> String? {
        switch self {
        case .string, .int64, .double, .timestamp, .bytes:
            return nil
        case .reference(let r):
            return NameRules.recordNameProblem(r.recordID.recordName).map { "field \(name): reference: \($0)" }
        case .location(let l):
            return l.problem.map { "field \(name): \($0)" }
        case .asset(let a):
            return a.problem.map { "field \(name): \($0)" }
        case .emptyList(let elementType):
            return Self.listElementTypes.contains(elementType) ? nil
                : "field \(name): '\(elementType)_LIST' is not a CloudKit list type"
        case .list(let items):
            guard let first = items.first else { return nil }
            let type = first.typeName
            for item in items {
                switch item {
                case .list, .emptyList:
                    return "field \(name): a list holds no lists (CloudKit lists do not nest)"
                default:
                    if item.typeName != type {
                        return "field \(name): a \(type)_LIST holds only \(type) items, not \(item.typeName)"
                    }
                    if let problem = item.problem(field: name) { return problem }
                }
            }
            return nil
        }
    }

    /// Calls `body` with every reference in this value (a list's items included).
    func forEachReference(_ body: (Reference) -> Void) {
        switch self {
        case .reference(let r): body(r)
        case .list(let items): for item in items { item.forEachReference(body) }
        default: break
        }
    }
}

extension RecordFields {
    // Every save asks these of its record: the fields are read where they sit in the array (a
    // closure's element is borrowed), so fields of strings and numbers cost no copies.

    /// Whether some field holds a value with parts to check.
    var holdsStructuredValues: Bool { entries.contains { $0.1.isStructured } }

    /// Whether some field is or may hold a reference.
    var mayHoldReferences: Bool { entries.contains { $0.1.mayHoldReferences } }
}
