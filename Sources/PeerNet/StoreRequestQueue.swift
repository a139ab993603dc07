// The store requests a driver has been asked for and not yet seen answered, run the way a
// CloudKit client's operation queue runs its operations: several at once, up to a bound, so a
// negotiation-time poll never waits behind a push-triggered fetch (or the other way round). Order
// is kept only where it matters: two requests that touch the same record (a save and the next
// save of it, a save and a lookup, a delete) run one after the other, in the order asked for, so
// change tags advance as the machine expects. No I/O: the driver asks what may start now and
// says when each request has finished.
import RecordStore
import Signaling

/// A bounded queue of store requests that keeps the order of requests touching the same record.
///
/// `enqueue` adds a request; `start()` hands out the oldest waiting request that may run now
/// (fewer than `limit` in flight, and no request asked for earlier that touches one of its
/// records still waiting or in flight); `finish` says a started request was answered.
public struct StoreRequestQueue<Tag: Sendable>: Sendable {
    /// Names a started request, to hand back to `finish`.
    public struct Ticket: Hashable, Sendable {
        let number: UInt64
    }

    /// One request, with what it must stay in order with.
    private struct Entry: Sendable {
        var ticket: Ticket
        var request: StoreRequest
        var tag: Tag
        var keys: Set<StoreRequest.OrderingKey>
    }

    /// The most requests in flight at once.
    public let limit: Int
    private var waiting: [Entry] = []
    private var inFlight: [Ticket: Set<StoreRequest.OrderingKey>] = [:]
    private var nextTicket: UInt64 = 0
    /// The most requests that were ever in flight at once (for tests and reports).
    public private(set) var peakInFlight = 0

    /// A queue running at most `limit` requests at once (at least 1).
    public init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Requests started and not finished.
    public var inFlightCount: Int { inFlight.count }
    /// Requests not started yet.
    public var waitingCount: Int { waiting.count }
    /// Nothing waiting, nothing in flight.
    public var isIdle: Bool { waiting.isEmpty && inFlight.isEmpty }

    /// Adds a request after every one asked for before it.
    public mutating func enqueue(_ request: StoreRequest, tag: Tag) {
        waiting.append(Entry(ticket: Ticket(number: nextTicket), request: request, tag: tag,
                             keys: request.orderingKeys))
        nextTicket &+= 1
    }

    /// The oldest waiting request that may run now, marked in flight; nil when none may.
    public mutating func start() -> (ticket: Ticket, request: StoreRequest, tag: Tag)? {
        guard inFlight.count < limit else { return nil }
        var busy = Set<StoreRequest.OrderingKey>()
        for keys in inFlight.values { busy.formUnion(keys) }
        for index in waiting.indices {
            let entry = waiting[index]
            if entry.keys.isDisjoint(with: busy) {
                waiting.remove(at: index)
                inFlight[entry.ticket] = entry.keys
                peakInFlight = max(peakInFlight, inFlight.count)
                return (entry.ticket, entry.request, entry.tag)
            }
            // A later request on the same record must not overtake this one.
            busy.formUnion(entry.keys)
        }
        return nil
    }

    /// A started request was answered: what waited for it may start.
    public mutating func finish(_ ticket: Ticket) {
        inFlight[ticket] = nil
    }
}

extension StoreRequest {
    /// What a request must stay in order with: the records it reads or writes, or the zone,
    /// share or subscription it changes. Change fetches have none: the sync machine keeps at most
    /// one per path in flight itself, and fetches of different paths may overlap.
    public enum OrderingKey: Hashable, Sendable {
        case record(RecordID)
        case zone(ZoneID)
        case share(ZoneID)
        case subscription(String)
    }

    /// The keys of this request (empty: it may run beside anything).
    public var orderingKeys: Set<OrderingKey> {
        switch operation {
        case .modifyRecords(let r):
            return Set(r.operations.map { .record($0.recordID) })
        case .lookupRecords(let ids):
            return Set(ids.map { .record($0) })
        case .fetchZoneChanges, .fetchDatabaseChanges:
            return []
        case .createZone(let zone):
            return [.zone(zone)]
        case .createShare(let zone, _, _), .fetchShare(let zone), .acceptShare(let zone):
            return [.share(zone)]
        case .saveSubscription(let s):
            return [.subscription(s.subscriptionID)]
        }
    }
}
