// The output queue every sans-I/O machine drains through `pollOutput()`: appended to while an
// input is handled, read front to back, and emptied (keeping its storage) once read through, so
// a busy machine allocates no new storage per input.
//
// It is generic and on every machine's hot path, so it is `@inlinable` (specialized in the
// module that uses it, rather than called through generic metadata), and `pop` moves an output
// out of its slot instead of copying it and releasing the original later.

/// A first-in first-out queue of a machine's outputs.
@frozen
public struct OutputQueue<Element> {
    /// The outputs; a slot is nil once its output was taken.
    @usableFromInline var items: [Element?] = []
    /// The first slot not yet taken.
    @usableFromInline var head = 0

    @inlinable
    public init(capacity: Int = 16) {
        items.reserveCapacity(capacity)
    }

    /// Queues an output.
    @inlinable
    public mutating func append(_ element: Element) {
        items.append(element)
    }

    /// The oldest output not yet taken, or nil.
    @inlinable
    public mutating func pop() -> Element? {
        guard head < items.count else {
            if head > 0 {
                items.removeAll(keepingCapacity: true)
                head = 0
            }
            return nil
        }
        defer { head += 1 }
        return items[head].take()
    }

    /// Whether every output has been taken.
    @inlinable
    public var isEmpty: Bool { head >= items.count }
}

extension OutputQueue: Sendable where Element: Sendable {}
