import Foundation

/// What concurrent tasks report (acknowledged writes, errors met), in order.
public final class Ledger<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [T] = []

    public init() {}

    /// Appends `item`; returns how many there are now.
    @discardableResult
    public func append(_ item: T) -> Int {
        lock.lock()
        defer { lock.unlock() }
        list.append(item)
        return list.count
    }

    public var items: [T] {
        lock.lock()
        defer { lock.unlock() }
        return list
    }
}
