// The output queue every sans-I/O machine drains through `pollOutput()`, and the queue any machine
// drains from the front: appended to while an input is handled, read front to back, and emptied
// (keeping its storage) once read through, so a busy machine allocates no new storage per input
// and taking the oldest element never moves the others.
//
// It is generic and on every machine's hot path, so it is `@inlinable` (specialized in the
// module that uses it, rather than called through generic metadata). Elements are moved in
// (`append` consumes) and out (`pop`), and only the ones still queued are ever destroyed.
//
// A machine that holds one is a value, so the storage is copied on write: a copy's queue is its own.

/// A first-in first-out queue of a machine's outputs.
@frozen
public struct OutputQueue<Element> {
    /// The outputs, nil until the first is queued (many machines never queue some kinds).
    @usableFromInline var storage: OutputQueueStorage<Element>?
    /// How many outputs the storage first holds.
    @usableFromInline let initialCapacity: Int

    @inlinable
    public init(capacity: Int = 16) {
        initialCapacity = Swift.max(capacity, 4)
    }

    /// Queues an output.
    @inlinable
    public mutating func append(_ element: consuming Element) {
        guard storage != nil else {
            let fresh = OutputQueueStorage<Element>.make(capacity: initialCapacity)
            fresh.initializeNext(element)
            storage = fresh
            return
        }
        if !isKnownUniquelyReferenced(&storage!) {
            storage = storage!.copy(capacity: storage!.slots)
        }
        if storage!.isFull {
            storage = storage!.makeRoom()
        }
        storage!.initializeNext(element)
    }

    /// The oldest output not yet taken, or nil.
    @inlinable
    public mutating func pop() -> Element? {
        // Not `guard let`: a second reference to the storage would make it look shared.
        guard storage != nil, !storage!.isEmpty else { return nil }
        if !isKnownUniquelyReferenced(&storage!) {
            storage = storage!.copy(capacity: storage!.slots)
        }
        return storage!.takeFirst()
    }

    /// Whether every output has been taken.
    @inlinable
    public var isEmpty: Bool { storage?.isEmpty ?? true }

    /// How many outputs are queued.
    @inlinable
    public var count: Int { storage?.count ?? 0 }

    /// Whether a queued output satisfies `predicate`.
    @inlinable
    public func contains(where predicate: (Element) -> Bool) -> Bool {
        guard let storage else { return false }
        return storage.contains(where: predicate)
    }

    /// Removes the queued outputs that satisfy `predicate`; the others keep their order.
    @inlinable
    public mutating func removeAll(where predicate: (Element) -> Bool) {
        guard storage != nil, !storage!.isEmpty else { return }
        if !isKnownUniquelyReferenced(&storage!) {
            storage = storage!.copy(capacity: storage!.slots)
        }
        storage!.removeAll(where: predicate)
    }
}

extension OutputQueue: @unchecked Sendable where Element: Sendable {}

/// Where the outputs `head ..< end` of the storage are.
@usableFromInline
struct OutputQueueHeader {
    @usableFromInline var head: Int
    @usableFromInline var end: Int
    /// Kept here: `ManagedBuffer.capacity` asks the allocator (`malloc_usable_size`) every time.
    @usableFromInline let capacity: Int

    @inlinable
    init(capacity: Int) {
        head = 0
        end = 0
        self.capacity = capacity
    }
}

/// An `OutputQueue`'s storage: initialized elements in `head ..< end`, nothing elsewhere.
@usableFromInline
final class OutputQueueStorage<Element>: ManagedBuffer<OutputQueueHeader, Element> {
    @inlinable
    static func make(capacity: Int) -> OutputQueueStorage<Element> {
        let buffer = create(minimumCapacity: capacity) { _ in OutputQueueHeader(capacity: capacity) }
        // `create` is declared on ManagedBuffer; the object it makes is of the class it was called on.
        return unsafeDowncast(buffer, to: OutputQueueStorage<Element>.self)
    }

    // The header is reached through its pointer, not the `header` property: a class's stored
    // property is checked for exclusive access at run time on every use.

    @inlinable
    var count: Int { withUnsafeMutablePointerToHeader { $0.pointee.end - $0.pointee.head } }

    @inlinable
    var isEmpty: Bool { withUnsafeMutablePointerToHeader { $0.pointee.head == $0.pointee.end } }

    @inlinable
    var isFull: Bool { withUnsafeMutablePointerToHeader { $0.pointee.end == $0.pointee.capacity } }

    @inlinable
    var slots: Int { withUnsafeMutablePointerToHeader { $0.pointee.capacity } }

    @inlinable
    func initializeNext(_ element: consuming Element) {
        // The slot's address is taken out of the closure so that the element is moved into it
        // rather than captured by the closure; the elements stay where they are while `self` lives.
        let slot = withUnsafeMutablePointers { header, elements in
            header.pointee.end += 1
            return elements + (header.pointee.end - 1)
        }
        slot.initialize(to: element)
    }

    /// Moves the oldest element out; once the last is taken, the storage starts again at slot 0.
    @inlinable
    func takeFirst() -> Element {
        withUnsafeMutablePointers { header, elements in
            let element = (elements + header.pointee.head).move()
            header.pointee.head += 1
            if header.pointee.head == header.pointee.end {
                header.pointee.head = 0
                header.pointee.end = 0
            }
            return element
        }
    }

    @inlinable
    func contains(where predicate: (Element) -> Bool) -> Bool {
        let (first, count) = withUnsafeMutablePointers { header, elements in
            (elements + header.pointee.head, header.pointee.end - header.pointee.head)
        }
        for i in 0..<count where predicate(first[i]) { return true }
        return false
    }

    /// Removes the elements that satisfy `predicate`, moving the others down over them in order.
    @inlinable
    func removeAll(where predicate: (Element) -> Bool) {
        let (first, count) = withUnsafeMutablePointers { header, elements in
            (elements + header.pointee.head, header.pointee.end - header.pointee.head)
        }
        var kept = 0
        for i in 0..<count {
            if predicate(first[i]) {
                (first + i).deinitialize(count: 1)
            } else {
                if i != kept { (first + kept).moveInitialize(from: first + i, count: 1) }
                kept += 1
            }
        }
        withUnsafeMutablePointerToHeader { header in
            header.pointee.end = kept == 0 ? 0 : header.pointee.head + kept
            if kept == 0 { header.pointee.head = 0 }
        }
    }

    /// A full storage with room at the front is compacted where it is; otherwise the outputs move
    /// to storage twice as large.
    @inlinable
    func makeRoom() -> OutputQueueStorage<Element> {
        let (head, count, capacity) = withUnsafeMutablePointerToHeader {
            ($0.pointee.head, $0.pointee.end - $0.pointee.head, $0.pointee.capacity)
        }
        guard head > 0 else { return moved(capacity: capacity * 2) }
        withUnsafeMutablePointers { header, elements in
            elements.moveInitialize(from: elements + head, count: count)
            header.pointee.head = 0
            header.pointee.end = count
        }
        return self
    }

    /// A storage of `capacity` holding copies of the queued elements (this one is shared).
    @inlinable
    func copy(capacity: Int) -> OutputQueueStorage<Element> { transferred(capacity: capacity, moving: false) }

    /// A storage of `capacity` the queued elements are moved into; this one is left empty.
    @inlinable
    func moved(capacity: Int) -> OutputQueueStorage<Element> { transferred(capacity: capacity, moving: true) }

    @inlinable
    func transferred(capacity: Int, moving: Bool) -> OutputQueueStorage<Element> {
        let fresh = Self.make(capacity: capacity)
        withUnsafeMutablePointers { header, elements in
            let (first, count) = (elements + header.pointee.head, header.pointee.end - header.pointee.head)
            fresh.withUnsafeMutablePointers { freshHeader, freshElements in
                if moving {
                    freshElements.moveInitialize(from: first, count: count)
                } else {
                    freshElements.initialize(from: first, count: count)
                }
                freshHeader.pointee.end = count
            }
            if moving {
                header.pointee.head = 0
                header.pointee.end = 0
            }
        }
        return fresh
    }

    deinit {
        withUnsafeMutablePointers { header, elements in
            _ = (elements + header.pointee.head).deinitialize(count: header.pointee.end - header.pointee.head)
        }
    }
}
