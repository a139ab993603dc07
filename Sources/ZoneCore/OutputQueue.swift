// The output queue every sans-I/O machine drains through `pollOutput()`, and the one home of any
// queue drained from the front (a driver's work list, a worker pool's jobs, the journal's entries):
// a ring buffer, appended at the back and taken from the front in constant time, wrapping around
// its storage and doubling it only when full, so a queue that stays busy keeps its storage and
// taking the oldest element never moves the others (an array's `removeFirst` moves them all).
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

    /// A queue whose storage first holds `capacity` outputs, rounded up to a power of two (at
    /// least 4) so a slot's index wraps with a mask.
    @inlinable
    public init(capacity: Int = 16) {
        var slots = 4
        while slots < capacity { slots *= 2 }
        initialCapacity = slots
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
            storage = storage!.moved(capacity: storage!.slots * 2)
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

    /// The oldest output not yet taken, left queued; nil when empty.
    @inlinable
    public var first: Element? {
        guard let storage, !storage.isEmpty else { return nil }
        return storage.element(at: 0)
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

/// Where the outputs of the storage are: `count` of them from slot `head`, wrapping past the last
/// slot to slot 0.
@usableFromInline
struct OutputQueueHeader {
    @usableFromInline var head: Int
    @usableFromInline var count: Int
    /// Kept here: `ManagedBuffer.capacity` asks the allocator (`malloc_usable_size`) every time.
    /// A power of two.
    @usableFromInline let capacity: Int

    @inlinable
    init(capacity: Int) {
        head = 0
        count = 0
        self.capacity = capacity
    }

    /// The slot of the `offset`th queued output.
    @inlinable
    func slot(_ offset: Int) -> Int { (head + offset) & (capacity - 1) }
}

/// An `OutputQueue`'s storage, a ring: initialized elements in the `count` slots from `head`
/// (wrapping around), nothing elsewhere.
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
    var count: Int { withUnsafeMutablePointerToHeader { $0.pointee.count } }

    @inlinable
    var isEmpty: Bool { withUnsafeMutablePointerToHeader { $0.pointee.count == 0 } }

    @inlinable
    var isFull: Bool { withUnsafeMutablePointerToHeader { $0.pointee.count == $0.pointee.capacity } }

    @inlinable
    var slots: Int { withUnsafeMutablePointerToHeader { $0.pointee.capacity } }

    /// A copy of the `offset`th queued element.
    @inlinable
    func element(at offset: Int) -> Element {
        withUnsafeMutablePointers { header, elements in elements[header.pointee.slot(offset)] }
    }

    @inlinable
    func initializeNext(_ element: consuming Element) {
        // The slot's address is taken out of the closure so that the element is moved into it
        // rather than captured by the closure; the elements stay where they are while `self` lives.
        let slot = withUnsafeMutablePointers { header, elements in
            header.pointee.count += 1
            return elements + header.pointee.slot(header.pointee.count - 1)
        }
        slot.initialize(to: element)
    }

    /// Moves the oldest element out; the next one becomes the head.
    @inlinable
    func takeFirst() -> Element {
        withUnsafeMutablePointers { header, elements in
            let element = (elements + header.pointee.head).move()
            header.pointee.head = header.pointee.slot(1)
            header.pointee.count -= 1
            return element
        }
    }

    @inlinable
    func contains(where predicate: (Element) -> Bool) -> Bool {
        withUnsafeMutablePointers { header, elements in
            for offset in 0..<header.pointee.count where predicate(elements[header.pointee.slot(offset)]) {
                return true
            }
            return false
        }
    }

    /// Removes the elements that satisfy `predicate`, moving the others towards the head over them
    /// in order.
    @inlinable
    func removeAll(where predicate: (Element) -> Bool) {
        withUnsafeMutablePointers { header, elements in
            var kept = 0
            for offset in 0..<header.pointee.count {
                let slot = elements + header.pointee.slot(offset)
                if predicate(slot.pointee) {
                    slot.deinitialize(count: 1)
                } else {
                    if offset != kept { (elements + header.pointee.slot(kept)).moveInitialize(from: slot, count: 1) }
                    kept += 1
                }
            }
            header.pointee.count = kept
        }
    }

    /// A storage of `capacity` holding copies of the queued elements (this one is shared).
    @inlinable
    func copy(capacity: Int) -> OutputQueueStorage<Element> { transferred(capacity: capacity, moving: false) }

    /// A storage of `capacity` the queued elements are moved into; this one is left empty.
    @inlinable
    func moved(capacity: Int) -> OutputQueueStorage<Element> { transferred(capacity: capacity, moving: true) }

    /// The queued elements in a fresh storage from slot 0: the run from the head to the last slot,
    /// then the run that wrapped around to slot 0.
    @inlinable
    func transferred(capacity: Int, moving: Bool) -> OutputQueueStorage<Element> {
        let fresh = Self.make(capacity: capacity)
        withUnsafeMutablePointers { header, elements in
            let (head, count) = (header.pointee.head, header.pointee.count)
            let firstRun = Swift.min(count, header.pointee.capacity - head)
            fresh.withUnsafeMutablePointers { freshHeader, freshElements in
                func transfer(
                    _ from: UnsafeMutablePointer<Element>, _ to: UnsafeMutablePointer<Element>, _ length: Int
                ) {
                    if moving {
                        to.moveInitialize(from: from, count: length)
                    } else {
                        to.initialize(from: from, count: length)
                    }
                }
                transfer(elements + head, freshElements, firstRun)
                transfer(elements, freshElements + firstRun, count - firstRun)
                freshHeader.pointee.count = count
            }
            if moving {
                header.pointee.head = 0
                header.pointee.count = 0
            }
        }
        return fresh
    }

    deinit {
        withUnsafeMutablePointers { header, elements in
            let (head, count) = (header.pointee.head, header.pointee.count)
            let firstRun = Swift.min(count, header.pointee.capacity - head)
            _ = (elements + head).deinitialize(count: firstRun)
            _ = elements.deinitialize(count: count - firstRun)
        }
    }
}
