/// A record's fields: a few named values, kept as a small array in the order they were first set.
///
/// A record holds a handful of fields, so a lookup compares names one by one instead of hashing
/// them (field names are short, and two equal short strings compare in one step). Two sets are
/// equal when they hold the same names with the same values in any order, as dictionaries are;
/// the order is never part of a wire or disk format (the JSON writer and the journal sort names).
/// A remote may send a record with many thousands of fields: whatever would compare every field
/// with every other (building from a sequence, merging, equality) goes through a temporary index
/// past `indexThreshold` fields, so nothing is quadratic in a hostile record.
public struct RecordFields: Sendable, Sequence, ExpressibleByDictionaryLiteral {
    public typealias Element = (key: String, value: FieldValue)

    /// Name-value pairs, unlabelled as a dictionary literal hands them over, so that a literal's
    /// array is kept as it is: pairs labelled as `Element` cost a second array and a copy of every
    /// field for each record built from a literal.
    @usableFromInline var entries: [(String, FieldValue)]

    /// Past this many fields, bulk operations index the names instead of scanning for each one.
    static let indexThreshold = 16

    public init() { entries = [] }

    /// Fields from a literal. Naming a field twice in a literal is a programmer's mistake, as it is
    /// in a dictionary literal: debug builds stop on it; release builds take the names as given
    /// (comparing every name with every other cost more than the rest of building a record).
    public init(dictionaryLiteral elements: (String, FieldValue)...) {
        assert(Set(elements.map(\.0)).count == elements.count, "a field named twice in a literal")
        entries = elements
    }

    /// Fields from name-value pairs in order; a name given twice keeps its last value.
    public init<S: Sequence>(_ pairs: S) where S.Element == (String, FieldValue) {
        entries = []
        entries.reserveCapacity(pairs.underestimatedCount)
        var index: [String: Int]?
        for (name, value) in pairs {
            if index == nil, entries.count >= Self.indexThreshold {
                index = Dictionary(entries.indices.map { (entries[$0].0, $0) }, uniquingKeysWith: { a, _ in a })
            }
            if index != nil {
                if let at = index![name] {
                    entries[at].1 = value
                } else {
                    index![name] = entries.count
                    entries.append((name, value))
                }
            } else {
                self[name] = value
            }
        }
    }

    /// The fields of a dictionary (whose names are unique already).
    public init(_ dictionary: [String: FieldValue]) {
        entries = dictionary.map { ($0.key, $0.value) }
    }

    public var count: Int { entries.count }
    public var isEmpty: Bool { entries.isEmpty }
    /// The field names, in the order they were first set.
    public var keys: [String] { entries.map(\.0) }

    /// The value named `name`; setting nil removes the field, setting a new name appends it.
    public subscript(name: String) -> FieldValue? {
        get {
            for (key, value) in entries where key == name { return value }
            return nil
        }
        set {
            if let at = entries.firstIndex(where: { $0.0 == name }) {
                if let newValue { entries[at].1 = newValue } else { entries.remove(at: at) }
            } else if let newValue {
                entries.append((name, newValue))
            }
        }
    }

    /// Bytes of field data, names included, as counted against the 1 MB record limit.
    var dataSize: Int { entries.reduce(0) { $0 + $1.0.utf8.count + $1.1.dataSize } }

    /// The fields in order, each as a labelled pair.
    public struct Iterator: IteratorProtocol {
        @usableFromInline var pairs: IndexingIterator<[(String, FieldValue)]>

        @inlinable
        init(_ pairs: IndexingIterator<[(String, FieldValue)]>) { self.pairs = pairs }

        @inlinable
        public mutating func next() -> Element? { pairs.next().map { (key: $0.0, value: $0.1) } }
    }

    @inlinable
    public func makeIterator() -> Iterator { Iterator(entries.makeIterator()) }
    public var underestimatedCount: Int { entries.count }

    /// These fields with `other`'s set over them: `other`'s value wins where both hold a name.
    public func merging(_ other: RecordFields) -> RecordFields {
        var merged = self
        if entries.count + other.count <= Self.indexThreshold {
            for (name, value) in other.entries { merged[name] = value }
            return merged
        }
        var index = merged.nameIndex()
        for (name, value) in other.entries {
            if let at = index[name] {
                merged.entries[at].1 = value
            } else {
                index[name] = merged.entries.count
                merged.entries.append((name, value))
            }
        }
        return merged
    }

    /// Whether every name of `filters` is here with an equal value.
    public func holds(_ filters: [String: FieldValue]) -> Bool {
        if filters.count > Self.indexThreshold, entries.count > Self.indexThreshold {
            let index = nameIndex()
            return filters.allSatisfy { filter in index[filter.key].map { entries[$0].1 == filter.value } == true }
        }
        return filters.allSatisfy { self[$0.key] == $0.value }
    }

    /// Each name's position (names are unique).
    private func nameIndex() -> [String: Int] {
        var index: [String: Int] = [:]
        index.reserveCapacity(entries.count)
        for (at, entry) in entries.enumerated() { index[entry.0] = at }
        return index
    }
}

extension RecordFields: Equatable {
    /// Same names with equal values, in any order.
    public static func == (a: RecordFields, b: RecordFields) -> Bool {
        guard a.entries.count == b.entries.count else { return false }
        if a.entries.count > indexThreshold {
            let index = b.nameIndex()
            return a.entries.allSatisfy { name, value in index[name].map { b.entries[$0].1 == value } == true }
        }
        return a.entries.allSatisfy { name, value in b[name] == value }
    }
}

extension RecordFields: Hashable {
    /// Independent of the order: each field hashes alone and the results are combined with XOR,
    /// as `Dictionary` does (a shared order would cost a sort of the names).
    public func hash(into hasher: inout Hasher) {
        var combined = 0
        for (name, value) in entries {
            var one = Hasher()
            one.combine(name)
            one.combine(value)
            combined ^= one.finalize()
        }
        hasher.combine(entries.count)
        hasher.combine(combined)
    }
}

extension RecordFields: CustomStringConvertible {
    /// As a dictionary prints, names in the order they were set.
    public var description: String {
        entries.isEmpty ? "[:]" : "[" + entries.map { "\($0.0.debugDescription): \($0.1)" }
            .joined(separator: ", ") + "]"
    }
}
