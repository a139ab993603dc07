import Foundation

/// Decides which records a query matches and in which order, over records in memory: the engine
/// runs it over a zone's records whatever the backend (the PostgreSQL store keeps the same state
/// in memory), so every backend answers alike.
///
/// The store has no schema, so one field name may hold values of different types in different
/// records. A filter compares values of comparable types only: a record whose field is missing,
/// or holds a value of another type, matches no filter on it, the negated comparators included
/// (as a missing value matches no comparison in SQL).
struct QueryEvaluator {
    let query: RecordQuery
    /// Each filter's list value as a set of canonical values, built once per request.
    private let valueSets: [Set<FieldValue>?]
    private let tokens: [Set<String>?]

    init(_ query: RecordQuery) {
        self.query = query
        valueSets = query.filters.map { f in f.value.listItems.map { Set($0.map(Self.canonical)) } }
        tokens = query.filters.map { f in
            switch f.comparator {
            case .containsAllTokens, .containsAnyTokens: return f.value.stringValue.map(QueryTokens.of)
            default: return nil
            }
        }
    }

    func matches(_ record: Record) -> Bool {
        guard record.recordType == query.recordType else { return false }
        let fields = record.fields
        for (i, filter) in query.filters.enumerated() {
            let value = filter.systemField.map { $0.value(of: record) } ?? fields[filter.fieldName]
            guard let field = value, holds(filter, i, field) else { return false }
        }
        return true
    }

    private func holds(_ f: QueryFilter, _ i: Int, _ field: FieldValue) -> Bool {
        switch f.comparator {
        case .equals: return Self.comparable(field, f.value) && Self.canonical(field) == Self.canonical(f.value)
        case .notEquals: return Self.comparable(field, f.value) && Self.canonical(field) != Self.canonical(f.value)
        case .lessThan: return Self.order(field, f.value).map { $0 < 0 } ?? false
        case .lessThanOrEquals: return Self.order(field, f.value).map { $0 <= 0 } ?? false
        case .greaterThan: return Self.order(field, f.value).map { $0 > 0 } ?? false
        case .greaterThanOrEquals: return Self.order(field, f.value).map { $0 >= 0 } ?? false
        case .near:
            guard case .location(let here) = field, case .location(let centre) = f.value, let d = f.distance else {
                return false
            }
            return Self.metres(here, centre) <= d
        case .containsAllTokens, .containsAnyTokens:
            guard let wanted = tokens[i] else { return false }
            let present: Set<String>
            switch field {
            case .string(let s): present = QueryTokens.of(s)
            case .list(let items) where items.first?.stringValue != nil:
                present = Set(items.flatMap { $0.stringValue.map(QueryTokens.of) ?? [] })
            default: return false
            }
            return f.comparator == .containsAllTokens ? wanted.isSubset(of: present) : !wanted.isDisjoint(with: present)
        case .isIn, .notIn:
            guard field.listItems == nil, let set = valueSets[i], Self.comparable(field, f.value) else { return false }
            return set.contains(Self.canonical(field)) == (f.comparator == .isIn)
        case .listContains, .notListContains:
            guard let items = field.listItems, Self.comparable(field, f.value) else { return false }
            let wanted = Self.canonical(f.value)
            return items.contains { Self.canonical($0) == wanted } == (f.comparator == .listContains)
        case .listContainsAny, .notListContainsAny:
            guard let items = field.listItems, let set = valueSets[i], Self.comparable(field, f.value) else {
                return false
            }
            return items.contains { set.contains(Self.canonical($0)) } == (f.comparator == .listContainsAny)
        case .listContainsAll, .notListContainsAll:
            guard let items = field.listItems, let set = valueSets[i], Self.comparable(field, f.value) else {
                return false
            }
            var found = Set<FieldValue>()
            for item in items {
                let c = Self.canonical(item)
                if set.contains(c) { found.insert(c) }
            }
            return (found.count == set.count) == (f.comparator == .listContainsAll)
        case .beginsWith, .notBeginsWith:
            guard case .string(let s) = field, case .string(let prefix) = f.value else { return false }
            return s.hasPrefix(prefix) == (f.comparator == .beginsWith)
        case .listMemberBeginsWith, .notListMemberBeginsWith:
            guard let items = field.listItems, case .string(let prefix) = f.value,
                  items.allSatisfy({ $0.stringValue != nil }) else { return false }
            let any = items.contains { $0.stringValue?.hasPrefix(prefix) == true }
            return any == (f.comparator == .listMemberBeginsWith)
        }
    }

    /// Whether the record comes before `b` in the query's order: each sort descriptor in turn
    /// (a record without the field after those with it, either direction), then zone, then name.
    func precedes(_ a: Record, _ b: Record) -> Bool {
        for s in query.sort {
            let x = sortKey(a, s), y = sortKey(b, s)
            switch (x, y) {
            case (nil, nil): continue
            case (nil, _): return false
            case (_, nil): return true
            case (let x?, let y?):
                let c = Self.rank(x, y)
                if c != 0 { return s.ascending ? c < 0 : c > 0 }
            }
        }
        let za = a.id.zoneID, zb = b.id.zoneID
        if za != zb { return (za.ownerName, za.zoneName) < (zb.ownerName, zb.zoneName) }
        return a.id.recordName < b.id.recordName
    }

    private func sortKey(_ r: Record, _ s: QuerySort) -> FieldValue? {
        guard let v = r.fields[s.fieldName] else { return nil }
        if let centre = s.relativeLocation {
            guard case .location(let here) = v else { return nil }
            return .double(Self.metres(here, centre))
        }
        return v
    }

    // MARK: Values

    /// The value equality compares: a whole double as the integer it equals (so `2` finds `2.0`),
    /// a reference by zone and record name only (a query's reference needs no action).
    static func canonical(_ v: FieldValue) -> FieldValue {
        switch v {
        case .double(let d): return Int64(exactly: d).map(FieldValue.int64) ?? v
        case .reference(var r):
            // The owner as well: a query's reference may leave it out, a stored one has it.
            r.action = .none
            r.recordID.zoneID.ownerName = ""
            return .reference(r)
        case .list(let items): return .list(items.map(canonical))
        default: return v
        }
    }

    /// Whether two values (or lists' items) are of types a filter compares: the same type, or
    /// both numbers (`INT64` and `DOUBLE`).
    static func comparable(_ a: FieldValue, _ b: FieldValue) -> Bool {
        kind(a) == kind(b)
    }

    private static func kind(_ v: FieldValue) -> String {
        switch v {
        case .int64, .double: return "NUMBER"
        case .list(let items): return items.first.map(kind) ?? "EMPTY"
        case .emptyList(let t): return t == "INT64" || t == "DOUBLE" ? "NUMBER" : t
        case .asset: return "ASSET"
        default: return v.typeName
        }
    }

    /// `LESS_THAN` and the like: the sign of a − b, or nil when they have no common order.
    static func order(_ a: FieldValue, _ b: FieldValue) -> Int? {
        switch (a, b) {
        case (.int64(let x), .int64(let y)), (.timestamp(let x), .timestamp(let y)): return x < y ? -1 : x > y ? 1 : 0
        case (.double(let x), .double(let y)): return x < y ? -1 : x > y ? 1 : 0
        case (.int64(let x), .double(let y)): return -compare(y, x)
        case (.double(let x), .int64(let y)): return compare(x, y)
        case (.string(let x), .string(let y)): return x < y ? -1 : x > y ? 1 : 0
        default: return nil
        }
    }

    /// A double against an integer without rounding the integer to a double.
    private static func compare(_ d: Double, _ i: Int64) -> Int {
        if let whole = Int64(exactly: d.rounded(.down)) {
            if whole != i { return whole < i ? -1 : 1 }
            return d > d.rounded(.down) ? 1 : 0
        }
        return d < 0 ? -1 : 1
    }

    /// A total order for sorting: values of one kind by `order` (bytes, references and lists
    /// likewise by their parts), different kinds by a fixed kind order.
    static func rank(_ a: FieldValue, _ b: FieldValue) -> Int {
        if let c = order(a, b) { return c }
        switch (a, b) {
        case (.bytes(let x), .bytes(let y)): return x.lexicographicallyPrecedes(y) ? -1 : x == y ? 0 : 1
        case (.reference(let x), .reference(let y)):
            return rank(.string(x.recordID.recordName), .string(y.recordID.recordName))
        case (.location(let x), .location(let y)):
            let c = rank(.double(x.latitude), .double(y.latitude))
            return c != 0 ? c : rank(.double(x.longitude), .double(y.longitude))
        default:
            if let x = a.listItems, let y = b.listItems {
                for (p, q) in zip(x, y) {
                    let c = rank(p, q)
                    if c != 0 { return c }
                }
                return x.count < y.count ? -1 : x.count > y.count ? 1 : 0
            }
            let ka = kindOrder(a), kb = kindOrder(b)
            return ka < kb ? -1 : ka > kb ? 1 : 0
        }
    }

    private static func kindOrder(_ v: FieldValue) -> Int {
        switch v {
        case .int64, .double: return 0
        case .timestamp: return 1
        case .string: return 2
        case .bytes: return 3
        case .reference: return 4
        case .location: return 5
        case .asset: return 6
        case .list, .emptyList: return 7
        }
    }

    /// Great-circle distance in metres (haversine on the mean Earth radius), ignoring altitude as
    /// CloudKit's location sort does.
    static func metres(_ a: Location, _ b: Location) -> Double {
        let radius = 6_371_008.8
        let rad = Double.pi / 180
        let dLat = (b.latitude - a.latitude) * rad, dLon = (b.longitude - a.longitude) * rad
        let h = sin(dLat / 2) * sin(dLat / 2)
            + cos(a.latitude * rad) * cos(b.latitude * rad) * sin(dLon / 2) * sin(dLon / 2)
        return 2 * radius * asin(min(1, h.squareRoot()))
    }
}

/// The words `CONTAINS_ALL_TOKENS` and `CONTAINS_ANY_TOKENS` match: runs of letters and digits,
/// compared without case or diacritics.
enum QueryTokens {
    static func of(_ text: String) -> Set<String> {
        let folded = text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
        var tokens = Set<String>()
        var current = ""
        for c in folded {
            if c.isLetter || c.isNumber {
                current.append(c)
            } else if !current.isEmpty {
                tokens.insert(current)
                current = ""
            }
        }
        if !current.isEmpty { tokens.insert(current) }
        return tokens
    }
}
