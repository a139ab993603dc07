/// A query of records, as CloudKit Web Services Reference's "Fetching Records Using a Query
/// (records/query)" describes its Query, Filter and Sort Descriptor dictionaries
/// (developer.apple.com/library/archive/…/CloudKitWebServicesReference/QueryingRecords.html):
/// one record type, filters that must all hold, and the order of the answer.
public struct RecordQuery: Hashable, Sendable {
    public var recordType: String
    /// Every filter must hold (the reference's `filterBy` has no OR).
    public var filters: [QueryFilter]
    /// Applied in order; records equal under all of them come in zone and record-name order.
    public var sort: [QuerySort]

    public init(recordType: String, filters: [QueryFilter] = [], sort: [QuerySort] = []) {
        self.recordType = recordType
        self.filters = filters
        self.sort = sort
    }

    /// What one request may ask, so that the work of evaluating it is bounded: a zone's records
    /// times its filters, each filter's cost bounded by its values and the record's list.
    public struct Limits: Sendable {
        public var filters = 64
        public var sortDescriptors = 8
        /// Items of a filter's list value (`IN`, `LIST_CONTAINS_ALL`, …): the 200 items of a
        /// request in Data Size Limits.
        public var valuesPerFilter = 200
        /// Tokens of a `CONTAINS_*_TOKENS` value.
        public var tokens = 64
        public init() {}
    }

    /// `BAD_REQUEST` naming what is wrong: a comparator given a value of a type it cannot compare,
    /// `distance` outside `NEAR`, a list over the limits.
    public func validate(_ limits: Limits = Limits()) throws(StoreError) {
        if recordType.isEmpty { throw StoreError(.invalidArguments, "query.recordType must not be empty") }
        if filters.count > limits.filters {
            throw StoreError(.limitExceeded, "query.filterBy: \(filters.count) filters; the limit is \(limits.filters)")
        }
        if sort.count > limits.sortDescriptors {
            throw StoreError(.limitExceeded,
                             "query.sortBy: \(sort.count) sort descriptors; the limit is \(limits.sortDescriptors)")
        }
        for (i, filter) in filters.enumerated() {
            if let problem = filter.problem(limits) {
                throw StoreError(.invalidArguments, "query.filterBy[\(i)] (\(filter.comparator.rawValue) on "
                                 + "\(filter.fieldName)): \(problem)")
            }
        }
        for (i, s) in sort.enumerated() {
            if let location = s.relativeLocation, location.problem != nil {
                throw StoreError(.invalidArguments, "query.sortBy[\(i)].relativeLocation: \(location.problem ?? "")")
            }
        }
    }
}

/// The comparators of the Filter dictionary's "Comparator Values", and `LIST_CONTAINS_ANY`, which
/// CloudKit JS's `QueryFilterComparator` adds.
public enum QueryComparator: String, Hashable, Sendable, CaseIterable {
    case equals = "EQUALS"
    case notEquals = "NOT_EQUALS"
    case lessThan = "LESS_THAN"
    case lessThanOrEquals = "LESS_THAN_OR_EQUALS"
    case greaterThan = "GREATER_THAN"
    case greaterThanOrEquals = "GREATER_THAN_OR_EQUALS"
    /// A location within `distance` metres of the value.
    case near = "NEAR"
    case containsAllTokens = "CONTAINS_ALL_TOKENS"
    case containsAnyTokens = "CONTAINS_ANY_TOKENS"
    /// The field's value is one of the value's items.
    case isIn = "IN"
    case notIn = "NOT_IN"
    /// The field's list holds the value.
    case listContains = "LIST_CONTAINS"
    case notListContains = "NOT_LIST_CONTAINS"
    /// The field's list holds one of the value's items.
    case listContainsAny = "LIST_CONTAINS_ANY"
    case notListContainsAny = "NOT_LIST_CONTAINS_ANY"
    /// The field's list holds every item of the value.
    case listContainsAll = "LIST_CONTAINS_ALL"
    case notListContainsAll = "NOT_LIST_CONTAINS_ALL"
    case beginsWith = "BEGINS_WITH"
    case notBeginsWith = "NOT_BEGINS_WITH"
    /// An item of the field's string list begins with the value.
    case listMemberBeginsWith = "LIST_MEMBER_BEGINS_WITH"
    case notListMemberBeginsWith = "NOT_LIST_MEMBER_BEGINS_WITH"

    /// What the value must be: a list, one value (not a list), a string, a location.
    enum Operand { case any, scalar, ordered, list, string, location }

    var operand: Operand {
        switch self {
        case .equals, .notEquals: return .any
        case .lessThan, .lessThanOrEquals, .greaterThan, .greaterThanOrEquals: return .ordered
        case .near: return .location
        case .containsAllTokens, .containsAnyTokens, .beginsWith, .notBeginsWith,
             .listMemberBeginsWith, .notListMemberBeginsWith: return .string
        case .isIn, .notIn, .listContainsAny, .notListContainsAny, .listContainsAll, .notListContainsAll: return .list
        case .listContains, .notListContains: return .scalar
        }
    }
}

/// The system fields a Filter dictionary names by `systemFieldName` (Types and Dictionaries →
/// Filter Dictionary): the record's name and who created and last changed it, and when (the
/// Record Dictionary's `recordName`, `created` and `modified`). Names compare as `STRING`s, times
/// as `TIMESTAMP`s (milliseconds since the Unix epoch).
public enum QuerySystemField: String, Hashable, Sendable, CaseIterable {
    case recordName
    case createdUserRecordName
    case createdTimestamp
    case modifiedUserRecordName
    case modifiedTimestamp

    /// Whether its values are times (else record and user names).
    public var isTimestamp: Bool { self == .createdTimestamp || self == .modifiedTimestamp }

    /// The record's value of the field; nil for a stamp the record does not have.
    func value(of record: Record) -> FieldValue? {
        switch self {
        case .recordName: return .string(record.id.recordName)
        case .createdUserRecordName: return record.created.map { .string($0.userRecordName) }
        case .createdTimestamp: return record.created.map { .timestamp($0.timestamp) }
        case .modifiedUserRecordName: return record.modified.map { .string($0.userRecordName) }
        case .modifiedTimestamp: return record.modified.map { .timestamp($0.timestamp) }
        }
    }

    /// Why `comparator` with `value` cannot filter this field, or nil: one value per record (no
    /// list, token or location comparator), of the field's type.
    func problem(_ comparator: QueryComparator, _ value: FieldValue) -> String? {
        switch comparator.operand {
        case .any, .ordered, .list: break
        case .string where comparator == .beginsWith || comparator == .notBeginsWith:
            if isTimestamp { return "\(rawValue) is a TIMESTAMP: \(comparator.rawValue) compares strings" }
        case .scalar, .string, .location:
            return "\(rawValue) holds one value, which \(comparator.rawValue) does not compare"
        }
        let wanted = isTimestamp ? "TIMESTAMP" : "STRING"
        for item in value.listItems ?? [value] where item.typeName != wanted {
            return "\(rawValue) compares with a \(wanted), not a \(item.typeName)"
        }
        return nil
    }
}

/// One Filter dictionary: `comparator`, `fieldName` or `systemFieldName`, `fieldValue`, and
/// `distance` for `NEAR`.
public struct QueryFilter: Hashable, Sendable {
    public var comparator: QueryComparator
    /// The field compared; a system field's name when `systemField` is set.
    public var fieldName: String
    /// The system field compared instead of a field (`systemFieldName`).
    public var systemField: QuerySystemField?
    public var value: FieldValue
    /// Metres, for `NEAR` only.
    public var distance: Double?

    public init(_ comparator: QueryComparator, _ fieldName: String, _ value: FieldValue, distance: Double? = nil) {
        self.comparator = comparator
        self.fieldName = fieldName
        self.value = value
        self.distance = distance
    }

    /// A filter on a system field.
    public init(_ comparator: QueryComparator, system: QuerySystemField, _ value: FieldValue) {
        self.init(comparator, system.rawValue, value)
        systemField = system
    }

    /// Why the filter cannot be evaluated, or nil.
    func problem(_ limits: RecordQuery.Limits) -> String? {
        if fieldName.isEmpty { return "fieldName must not be empty" }
        if comparator != .near, distance != nil { return "distance is only read by NEAR" }
        if let system = systemField, let problem = system.problem(comparator, value) { return problem }
        let type = value.typeName
        switch comparator.operand {
        case .any:
            break
        case .scalar:
            if value.isList { return "the value must be one item, not a \(type)" }
        case .ordered:
            switch value {
            case .string, .int64, .double, .timestamp: break
            default: return "a \(type) value has no order (STRING, INT64, DOUBLE or TIMESTAMP)"
            }
        case .list:
            if !value.isList { return "the value must be a list, not a \(type)" }
        case .string:
            guard case .string(let s) = value else { return "the value must be a STRING, not a \(type)" }
            if comparator == .containsAllTokens || comparator == .containsAnyTokens {
                let tokens = QueryTokens.of(s)
                if tokens.isEmpty { return "the value holds no token (no letter or digit)" }
                if tokens.count > limits.tokens { return "\(tokens.count) tokens; the limit is \(limits.tokens)" }
            }
        case .location:
            guard case .location = value else { return "the value must be a LOCATION, not a \(type)" }
            guard let d = distance else { return "NEAR needs distance (metres)" }
            if !d.isFinite || d < 0 { return "distance must be a finite number of metres, at least 0" }
        }
        if case .list(let items) = value, items.count > limits.valuesPerFilter {
            return "\(items.count) values; the limit is \(limits.valuesPerFilter)"
        }
        return nil
    }
}

/// One Sort Descriptor dictionary: `fieldName`, `ascending` (default true), and
/// `relativeLocation` to order locations by their distance from it.
public struct QuerySort: Hashable, Sendable {
    public var fieldName: String
    public var ascending: Bool
    public var relativeLocation: Location?

    public init(_ fieldName: String, ascending: Bool = true, relativeLocation: Location? = nil) {
        self.fieldName = fieldName
        self.ascending = ascending
        self.relativeLocation = relativeLocation
    }
}

/// A page of a query's answer: `continuationMarker` is set when more records match.
public struct QueryPage: Sendable {
    public var records: [Record]
    public var continuationMarker: String?

    public init(records: [Record], continuationMarker: String?) {
        self.records = records
        self.continuationMarker = continuationMarker
    }
}

extension FieldValue {
    var isList: Bool {
        switch self {
        case .list, .emptyList: return true
        default: return false
        }
    }

    /// A list's items (none for an empty list), nil for one value.
    var listItems: [FieldValue]? {
        switch self {
        case .list(let items): return items
        case .emptyList: return []
        default: return nil
        }
    }
}
