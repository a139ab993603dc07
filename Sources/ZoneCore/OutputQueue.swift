// The output queue every sans-I/O machine drains through `pollOutput()`: appended to while an
// input is handled, read front to back, and emptied (keeping its storage) once read through, so
// a busy machine allocates no new storage per input.

/// A first-in first-out queue of a machine's outputs.
public struct OutputQueue<Element> {
    private var items: [Element] = []
    private var head = 0

    public init(capacity: Int = 16) {
        items.reserveCapacity(capacity)
    }

    /// Queues an output.
    public mutating func append(_ element: Element) {
        items.append(element)
    }

    /// The oldest output not yet taken, or nil.
    public mutating func pop() -> Element? {
        guard head < items.count else {
            if head > 0 {
                items.removeAll(keepingCapacity: true)
                head = 0
            }
            return nil
        }
        defer { head += 1 }
        return items[head]
    }

    /// Whether every output has been taken.
    public var isEmpty: Bool { head >= items.count }
}

extension OutputQueue: Sendable where Element: Sendable {}
