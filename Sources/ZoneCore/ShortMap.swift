/// A map for a handful of entries, found by comparing keys rather than hashing them: for the small
/// tables on a simulated call's hot paths (a network's routes, a store's clients), which a
/// comparison with each entry searches faster than a hash of the key (an address, a user name).
/// Linear in its size: never for a table a remote can grow.
public struct ShortMap<Key: Equatable, Value> {
    @usableFromInline var entries: [(key: Key, value: Value)] = []

    @inlinable public init() {}

    /// How many entries it holds.
    @inlinable public var count: Int { entries.count }

    @inlinable func index(of key: Key) -> Int? {
        entries.firstIndex { $0.key == key }
    }

    /// The value of `key`; setting nil removes it, setting a value replaces the one `key` had.
    @inlinable public subscript(key: Key) -> Value? {
        get { index(of: key).map { entries[$0].value } }
        set {
            switch (index(of: key), newValue) {
            case let (index?, value?): entries[index].value = value
            case let (index?, nil): entries.remove(at: index)
            case let (nil, value?): entries.append((key, value))
            case (nil, nil): break
            }
        }
    }

    /// Takes the value of `key` out, if it has one.
    @discardableResult
    @inlinable public mutating func removeValue(forKey key: Key) -> Value? {
        guard let index = index(of: key) else { return nil }
        return entries.remove(at: index).value
    }
}

extension ShortMap: Sendable where Key: Sendable, Value: Sendable {}
