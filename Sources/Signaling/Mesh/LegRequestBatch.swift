// The store requests of a room's legs, gathered over one event and sent together: lookups of
// several pairs in one `records/lookup`, non-atomic saves and deletions of several pairs (chunks,
// answers, garbage) in one `records/modify` (each operation says how it saves, so operations of
// every type share a request). An atomic request — a pair's offer with its session record,
// docs/PROTOCOL.md §4 — always goes alone. The answer is split back by record
// name, each leg getting the outcome of its own items as if it had asked alone.
import RecordStore

/// One leg's request inside a store request, echoed back with the outcome.
public struct LegRequest: Hashable, Sendable {
    /// The leg that asked.
    public var leg: LegID
    /// What it asked for.
    public var action: CallNegotiator.Action

    public init(leg: LegID, action: CallNegotiator.Action) {
        self.leg = leg
        self.action = action
    }
}

/// A leg of a room: the remote member, and which of our legs with it (a new one starts when the
/// member rejoins), so an answer meant for an ended leg never reaches its successor.
public struct LegID: Hashable, Sendable, CustomStringConvertible {
    /// The remote member's user ID.
    public var remote: String
    /// Counts this room's legs from 1.
    public var generation: Int

    public init(remote: String, generation: Int) {
        self.remote = remote
        self.generation = generation
    }

    public var description: String { "\(remote)#\(generation)" }
}

/// Gathers leg requests and makes store requests of them.
enum LegRequestBatch {
    /// Lookups per request at most (CloudKit's lookup limit is 200 records).
    static let maxLookups = 200
    /// Operations per modify request at most (CloudKit Web Services, Data Size Limits: 200).
    static let maxOperations = 200
    /// Field bytes per modify request at most, well inside the 2 MB request limit.
    static let maxBytes = 1_000_000

    /// The store requests for `requests`, in order: the atomic ones as they came, then lookups, then the
    /// merged modifications; each with the leg requests it carries.
    static func batches(_ requests: [LegRequest], scope: DatabaseScope) -> [(StoreRequest, [LegRequest])] {
        var out: [(StoreRequest, [LegRequest])] = []
        var lookups: [LegRequest] = []
        var modifies: [LegRequest] = []
        for request in requests {
            switch request.action {
            case .modify(_, atomic: true):
                if let single = request.action.storeRequest(scope: scope) { out.append((single, [request])) }
            case .modify(_, atomic: false):
                modifies.append(request)
            case .lookup:
                lookups.append(request)
            case .fetchNow, .ice, .report, .rejected, .remoteHungUp:
                continue
            }
        }
        for group in split(lookups, limit: { ids(of: $0).count }, maxCount: maxLookups, maxBytes: .max) {
            out.append((StoreRequest(scope: scope, .lookupRecords(group.flatMap(ids(of:)))), group))
        }
        for group in split(modifies, limit: operations(of:), maxCount: maxOperations, maxBytes: maxBytes) {
            var operations: [RecordOperation] = []
            for request in group {
                guard case .modify(let ops, _) = request.action else { continue }
                operations += ops
            }
            out.append((StoreRequest(scope: scope, .modifyRecords(
                ModifyRecordsRequest(operations: operations, atomic: false))), group))
        }
        return out
    }

    /// Consecutive groups of `requests` each within `maxCount` items and `maxBytes` of fields.
    private static func split(_ requests: [LegRequest], limit count: (LegRequest) -> Int, maxCount: Int,
                              maxBytes: Int) -> [[LegRequest]] {
        var groups: [[LegRequest]] = []
        var group: [LegRequest] = []
        var items = 0
        var bytes = 0
        for request in requests {
            let n = count(request)
            let size = fieldBytes(of: request)
            if !group.isEmpty && (items + n > maxCount || bytes + size > maxBytes) {
                groups.append(group)
                group = []
                items = 0
                bytes = 0
            }
            group.append(request)
            items += n
            bytes += size
        }
        if !group.isEmpty { groups.append(group) }
        return groups
    }

    private static func ids(of request: LegRequest) -> [RecordID] {
        if case .lookup(let ids) = request.action { return ids }
        return []
    }

    private static func operations(of request: LegRequest) -> Int {
        if case .modify(let operations, _) = request.action { return operations.count }
        return 0
    }

    private static func fieldBytes(of request: LegRequest) -> Int {
        guard case .modify(let operations, _) = request.action else { return 0 }
        return operations.reduce(0) { $0 + ($1.record?.fieldDataSize ?? 0) }
    }

    /// The outcome of a store request carrying `requests`, split into what each leg is told.
    static func split(_ outcome: StoreOutcome, among requests: [LegRequest]) -> [(LegRequest, CallNegotiator.Event)] {
        switch outcome {
        case .failed(let error):
            return requests.map { ($0, .requestFailed($0.action, error)) }
        case .lookedUp(let results):
            guard results.count == requests.reduce(0, { $0 + ids(of: $1).count }) else {
                return failAll(requests, "a lookup answered \(results.count) items")
            }
            var start = 0
            return requests.map { request in
                let n = ids(of: request).count
                defer { start += n }
                return (request, .lookedUp(Array(results[start..<start + n])))
            }
        case .modified(let result):
            if requests.count == 1 { return [(requests[0], .modified(result))] }
            var owner: [String: Int] = [:]
            for (index, request) in requests.enumerated() {
                guard case .modify(let operations, _) = request.action else { continue }
                for operation in operations { owner[operation.recordID.recordName] = index }
            }
            var parts = Array(repeating: [RecordResult](), count: requests.count)
            for item in result.results {
                if let index = owner[item.recordID.recordName] { parts[index].append(item) }
            }
            return requests.indices.map { (requests[$0], .modified(ModifyRecordsResult(results: parts[$0]))) }
        case .zoneChanges, .databaseChanges, .zones, .share, .subscriptions:
            return failAll(requests, "a leg's request was answered with \(outcome)")
        }
    }

    private static func failAll(_ requests: [LegRequest], _ why: String) -> [(LegRequest, CallNegotiator.Event)] {
        let error = StoreError(.internalError, why)
        return requests.map { ($0, .requestFailed($0.action, error)) }
    }
}
