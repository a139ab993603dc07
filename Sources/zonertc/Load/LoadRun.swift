import Foundation
import Net
import StoreServer
import ZoneCore

/// The devices `zonertc bench load` plays and what they measured. Each device is a user of its
/// own with a zone, a database subscription and a push stream; its saves go to its own zone, so
/// every save notifies exactly that device. Everything here runs on `loop`.
final class LoadRun: @unchecked Sendable {
    struct Settings: Sendable {
        var devices: Int
        var requestConnections: Int
        /// Daemons; device i streams from one and saves through the next, so with two daemons
        /// every push crosses from one to the other.
        var endpoints: [Endpoint]
        /// Makes user names unique per run (PostgreSQL keeps users).
        var runID: String
        /// Request connections per daemon that setting up and reading back use (nil: all): kept
        /// below a daemon's `--max-requests-in-flight`, so that only saves are ever shed.
        var setupConnections: Int? = nil
    }

    final class Device {
        let index: Int
        let name: String
        var token = ""
        var stream: LoadConnection?
        var ready = false
        var failed = false
        /// Its stream came up or failed (`openNextStreams`).
        var settled = false
        /// A save of it was shed: it saves again from then on (monotonic nanoseconds).
        var backoffUntil: UInt64?
        /// The end of the stream's last chunk, so an event name split across chunks is still seen.
        var tail: [UInt8] = []
        /// When each acknowledged save without a notification yet was sent.
        var unnotified: [UInt64] = []
        /// Saves sent and not answered yet.
        var inFlight = 0
        /// When the stream's last notification arrived.
        var notifiedAt: UInt64?
        /// Records this device's acknowledged saves wrote.
        var acknowledged: Set<String> = []
        var nextSave = 0

        init(index: Int, name: String) {
            self.index = index
            self.name = name
        }
    }

    /// What the run counted so far.
    struct Tally: Sendable {
        var usersReady = 0
        var streamsReady = 0
        var streamsFailed = 0
        var savesSent = 0
        var savesAnswered = 0
        var savesAcknowledged = 0
        var pushesReceived = 0
        /// Saves the daemon shed (503 `TRY_AGAIN_LATER`), and how many of those named a `retryAfter`.
        var shed = 0
        var shedWithRetryAfter = 0
        /// Saves not sent because their device was waiting out a shed save's `retryAfter`.
        var savesDeferred = 0
        /// The longest time with saves outstanding and no answer to any of them, in milliseconds:
        /// a daemon that stalls shows here, one that sheds quickly does not.
        var longestAnswerGapMs = 0.0
        /// When the last shed answer came (monotonic nanoseconds).
        var lastShedAt: UInt64?
        var errors: [String: Int] = [:]
    }

    let loop: EventLoop
    let settings: Settings
    private(set) var devices: [Device]
    private var pools: [[LoadConnection]] = []
    private var nextPooled = 0
    private(set) var tally = Tally()
    /// Since when saves have been outstanding with no answer to any (nil: none outstanding).
    private var waitingSince: UInt64?
    /// Milliseconds from a save's request to its answer, and to its device's notification.
    private(set) var answerMs: [Double] = []
    private(set) var pushMs: [Double] = []
    private static let marker = Array("event: notification".utf8)
    private static let readyMarker = Array(": ready".utf8)
    private static let errorKey = Array(#""serverErrorCode""#.utf8)
    static let recordsPerDevice = 8
    private let basePath = "/database/1/iCloud.zonertc/development"

    init(settings: Settings) throws {
        self.settings = settings
        loop = try EventLoop(name: "zonertc-bench-load")
        devices = (0..<settings.devices).map { Device(index: $0, name: "load-\(settings.runID)-\($0)") }
        loop.start()
    }

    /// Runs `work` on the loop and returns what it returns.
    func onLoop<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in loop.execute { continuation.resume(returning: work()) } }
    }

    /// Waits until `done` holds on the loop (looked at every 10 ms) or `limit` passes; whether it held.
    func wait(within limit: Duration, until done: @escaping @Sendable () -> Bool) async -> Bool {
        let end = loop.clock.now() + limit
        return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            loop.execute { [self] in
                func check() {
                    if done() { return continuation.resume(returning: true) }
                    if loop.clock.now() >= end { return continuation.resume(returning: false) }
                    loop.schedule(at: loop.clock.now() + .milliseconds(10)) { check() }
                }
                check()
            }
        }
    }

    /// A source address in 127.0.0.0/8 for slot `n`, `perAddress` slots to an address.
    static func source(_ n: Int, perAddress: Int = 100) -> IPAddress {
        let a = n / perAddress
        return (try? IPAddress(parsing: "127.\(1 + a / 62_500 % 254).\(a / 250 % 250).\(a % 250 + 1)"))
            ?? (try! IPAddress(parsing: "127.0.0.1"))
    }

    // MARK: Setup (on the loop)

    /// Opens the request connections and creates every device's user, zone and subscription.
    func startSetup() {
        for (e, endpoint) in settings.endpoints.enumerated() {
            pools.append((0..<settings.requestConnections).compactMap { j in
                try? LoadConnection.open(to: endpoint, from: Self.source(1_000_000 + e * 100_000 + j, perAddress: 50),
                                         on: loop)
            })
        }
        for device in devices { register(device) }
    }

    private func register(_ device: Device) {
        let body = WireFormat.serialize(["userName": device.name])
        send(0, "/auth/register", token: nil, device: nil, body) { [self] status, object in
            guard status == 200, let token = object["token"] as? String else { return failSetup(device, status, object) }
            device.token = token
            let zone: WireFormat.Object = ["zoneID": zoneID(device)]
            let create: WireFormat.Object = ["operationType": "create", "zone": zone]
            send(device.index, "\(basePath)/private/zones/modify", token: token, device: "setup",
                 WireFormat.serialize(["operations": [create]])) { [self] status, object in
                guard status == 200 else { return failSetup(device, status, object) }
                let subscription: WireFormat.Object = ["subscriptionID": "load", "subscriptionType": "database"]
                let op: WireFormat.Object = ["operationType": "create", "subscription": subscription]
                send(device.index, "\(basePath)/private/subscriptions/modify", token: token, device: "setup",
                     WireFormat.serialize(["operations": [op]])) { [self] status, object in
                    guard status == 200 else { return failSetup(device, status, object) }
                    tally.usersReady += 1
                }
            }
        }
    }

    private func failSetup(_ device: Device, _ status: Int, _ object: WireFormat.Object) {
        device.failed = true
        count(error: status, object)
    }

    /// Opens every ready device's push stream from its own source address.
    func openStreams() {
        streamQueue = devices.filter { !$0.failed }.reversed()
        openNextStreams()
    }

    /// Devices whose stream is not opened yet, last first; streams opened and not yet ready or failed.
    private var streamQueue: [Device] = []
    private var streamsOpening = 0

    /// Opens streams while fewer than `setupConnections` are on their way (all at once when nil).
    private func openNextStreams() {
        while streamsOpening < (settings.setupConnections ?? Int.max), let device = streamQueue.popLast() {
            streamsOpening += 1
            openStream(device)
        }
    }

    /// A stream came up or failed: the next may go.
    private func streamSettled(_ device: Device) {
        guard !device.settled else { return }
        device.settled = true
        streamsOpening -= 1
        openNextStreams()
    }

    private func openStream(_ device: Device) {
        let endpoint = settings.endpoints[(device.index + 1) % settings.endpoints.count]
        guard let stream = try? LoadConnection.open(to: endpoint, from: Self.source(device.index), on: loop) else {
            device.failed = true
            tally.streamsFailed += 1
            return streamSettled(device)
        }
        device.stream = stream
        stream.onStreamHead = { [self, unowned device] status in
            if status != 200 {
                device.failed = true
                tally.streamsFailed += 1
                count(error: status, [:])
                streamSettled(device)
            }
        }
        stream.onStreamChunk = { [self, unowned device] chunk in self.received(chunk, on: device) }
        stream.onClose = { [self, unowned device] in
            if !device.failed {
                device.failed = true
                tally.streamsFailed += 1
                tally.errors["STREAM_CLOSED", default: 0] += 1
            }
            streamSettled(device)
        }
        stream.openStream(LoadConnection.request(
            method: "GET", path: "\(basePath)/push", host: endpoint.description,
            headers: [("Authorization", "Bearer \(device.token)"), ("X-Device-ID", "phone"),
                      ("Accept", "text/event-stream")], body: []))
    }

    private func received(_ chunk: [UInt8], on device: Device) {
        let text = device.tail + chunk
        let found = Self.occurrences(of: Self.marker, in: text)
        if !device.ready, Self.occurrences(of: Self.readyMarker, in: text) > 0 {
            device.ready = true
            tally.streamsReady += 1
            streamSettled(device)
        }
        device.tail = Array(text.suffix(Self.marker.count - 1))
        guard found > 0 else { return }
        tally.pushesReceived += found
        // A notification tells the device to fetch: it covers every save acknowledged before it.
        let now = Stopwatch.monotonicNanoseconds()
        device.notifiedAt = now
        for sent in device.unnotified { pushMs.append(Double(now &- sent) / 1e6) }
        device.unnotified.removeAll()
    }

    // MARK: Saves (on the loop)

    /// One save by `device` to its own zone.
    func save(_ device: Device) {
        guard !device.failed else { return }
        if let until = device.backoffUntil {
            guard Stopwatch.monotonicNanoseconds() >= until else {
                tally.savesDeferred += 1
                return
            }
            device.backoffUntil = nil
        }
        device.nextSave += 1
        // A few records per device, saved over and over: the data set stops growing after warm-up,
        // so a long run at a steady rate measures the daemon, not the data it keeps.
        let name = "r\(device.nextSave % Self.recordsPerDevice)"
        // Written out rather than built as a WireFormat object: the bench shares the two cores with
        // the daemon it measures, and every microsecond it spends per save is one the daemon lacks.
        let body = #"{"zoneID":{"zoneName":"Load","ownerRecordName":"# + JSONString.quoted(device.name)
            + #"},"operations":[{"operationType":"forceReplace","record":{"recordName":""# + name
            + #"","recordType":"Note","fields":{"n":{"value":""# + name + #"","type":"STRING"}}}}]}"#
        let sent = Stopwatch.monotonicNanoseconds()
        tally.savesSent += 1
        // Alone: no other save of the device is unanswered or waits for its notification, so the first
        // notification after this one was sent is this save's, even when it overtakes the save's answer
        // (the daemon notifies once the save is durable, and answers on another connection).
        let alone = device.inFlight == 0 && device.unnotified.isEmpty
        device.inFlight += 1
        if waitingSince == nil { waitingSince = sent }
        // From another of the user's devices: the store does not notify the device that made a change.
        sendRaw(device.index + 1, "\(basePath)/private/records/modify", token: device.token, device: "laptop",
                Array(body.utf8)) { [self] status, bytes in
            tally.savesAnswered += 1
            device.inFlight -= 1
            let answered = Stopwatch.monotonicNanoseconds()
            if let since = waitingSince {
                tally.longestAnswerGapMs = max(tally.longestAnswerGapMs, Double(answered &- since) / 1e6)
            }
            waitingSince = tally.savesAnswered < tally.savesSent ? answered : nil
            // The save's answer is the record, or the record's error: only an error is read in full.
            guard status == 200, Self.occurrences(of: Self.errorKey, in: bytes) == 0 else {
                let object = (try? WireFormat.parseObject(bytes)) ?? [:]
                let error = (object["records"] as? [WireFormat.Object])?.first ?? object
                if let wait = Self.retryAfter(status, error) {
                    tally.shed += 1
                    tally.lastShedAt = answered
                    if let after = error["retryAfter"] as? NSNumber, after.doubleValue > 0 {
                        tally.shedWithRetryAfter += 1
                    }
                    // As a client does: this device saves again only once the retryAfter has passed.
                    device.backoffUntil = answered &+ UInt64(wait.nanoseconds)
                }
                return count(error: status, error)
            }
            answerMs.append(Double(answered &- sent) / 1e6)
            tally.savesAcknowledged += 1
            device.acknowledged.insert(name)
            if alone, let notified = device.notifiedAt, notified > sent {
                pushMs.append(Double(notified &- sent) / 1e6)
            } else {
                device.unnotified.append(sent)
            }
        }
    }

    /// Non-overlapping occurrences of `needle` in `text`. Foundation's generic `firstRange(of:)`
    /// took a fifth of the bench's CPU per save, looking for an error key in every answer.
    static func occurrences(of needle: [UInt8], in text: [UInt8]) -> Int {
        guard let first = needle.first, text.count >= needle.count else { return 0 }
        return text.withUnsafeBufferPointer { t in
            needle.withUnsafeBufferPointer { n in
                var i = 0, found = 0
                while i + n.count <= t.count {
                    if t[i] == first && memcmp(t.baseAddress! + i, n.baseAddress!, n.count) == 0 {
                        found += 1
                        i += n.count
                    } else {
                        i += 1
                    }
                }
                return found
            }
        }
    }

    /// Runs `work`, whose requests gather per connection and leave a few kilobytes at a time
    /// (`LoadConnection.holding`), then sends the rest.
    func batchingRequests(_ work: () -> Void) {
        for pool in pools { for c in pool { c.holding = true } }
        work()
        for pool in pools {
            for c in pool {
                c.holding = false
                c.releaseHeld()
            }
        }
    }

    private var cursor = 0

    /// `count` saves, each by the next device in turn.
    func saveRoundRobin(_ count: Int) {
        guard !devices.isEmpty else { return }
        batchingRequests {
            for _ in 0..<count {
                save(devices[cursor % devices.count])
                cursor += 1
            }
        }
    }

    /// Acknowledged saves whose device has not been notified yet.
    var unnotified: Int { devices.reduce(0) { $0 + $1.unnotified.count } }

    /// Reads back every acknowledged save; how many are missing (or could not be read).
    func verify(_ done: @escaping (Int) -> Void) {
        var left = devices.count
        var missing = 0
        guard left > 0 else { return done(0) }
        for device in devices {
            let names = device.acknowledged.sorted()
            guard !names.isEmpty else {
                left -= 1
                if left == 0 { done(missing) }
                continue
            }
            let records = names.map { ["recordName": $0, "zoneID": zoneID(device)] as WireFormat.Object }
            let body = WireFormat.serialize(["records": records])
            // A daemon still working off an overload sheds the look-up too: asked again after its
            // `retryAfter`, a bounded number of times, before the records count as missing.
            func lookUp(attempt: Int) {
                send(device.index, "\(basePath)/private/records/lookup", token: device.token, device: "check",
                     body) { [self] status, object in
                    if let wait = Self.retryAfter(status, object), attempt < Self.lookUpAttempts {
                        loop.schedule(at: loop.clock.now() + wait) { lookUp(attempt: attempt + 1) }
                        return
                    }
                    let results = object["records"] as? [WireFormat.Object] ?? []
                    let found = results.filter { $0["serverErrorCode"] == nil }
                    missing += status == 200 ? max(0, names.count - found.count) : names.count
                    left -= 1
                    if left == 0 { done(missing) }
                }
            }
            lookUp(attempt: 1)
        }
    }

    private static let lookUpAttempts = 30

    /// How long to wait before asking again, when `object` is a shed request's answer (503
    /// `TRY_AGAIN_LATER`): its `retryAfter`, kept within 0.1–5 s.
    static func retryAfter(_ status: Int, _ object: WireFormat.Object) -> Duration? {
        guard status == 503, object["serverErrorCode"] as? String == "TRY_AGAIN_LATER" else { return nil }
        let seconds = (object["retryAfter"] as? NSNumber)?.doubleValue ?? 1
        return .milliseconds(Int64(min(max(seconds.isFinite ? seconds : 1, 0.1), 5) * 1000))
    }

    // MARK: Requests

    private func zoneID(_ device: Device) -> WireFormat.Object {
        ["zoneName": "Load", "ownerRecordName": device.name]
    }

    /// Sends a request on the least busy connection of daemon `slot % daemons`; `done` gets the
    /// answer's JSON object.
    private func send(_ slot: Int, _ path: String, token: String?, device: String?, _ body: [UInt8],
                      done: @escaping (Int, WireFormat.Object) -> Void) {
        sendRaw(slot, path, token: token, device: device, body, within: settings.setupConnections) { status, bytes in
            done(status, (try? WireFormat.parseObject(bytes)) ?? [:])
        }
    }

    /// Sends a request on the least busy connection of daemon `slot % daemons`; `done` gets the answer.
    private func sendRaw(_ slot: Int, _ path: String, token: String?, device: String?, _ body: [UInt8],
                         within: Int? = nil, done: @escaping (Int, [UInt8]) -> Void) {
        let e = slot % settings.endpoints.count
        let pool = pools[e].prefix(within ?? pools[e].count)
        guard !pool.isEmpty else { return done(0, []) }
        // Round robin, skipping ahead to an idle connection when the next one is busy.
        var pick = nextPooled % pool.count
        nextPooled &+= 1
        if pool[pick].load > 0, let idle = pool.firstIndex(where: { $0.load == 0 }) { pick = idle }
        var headers = [("Content-Type", "application/json")]
        if let token { headers.append(("Authorization", "Bearer \(token)")) }
        if let device { headers.append(("X-Device-ID", device)) }
        let bytes = LoadConnection.request(method: "POST", path: path, host: settings.endpoints[e].description,
                                           headers: headers, body: body)
        pools[e][pick].request(bytes, done: done)
    }

    private func count(error status: Int, _ object: WireFormat.Object) {
        let code = object["serverErrorCode"] as? String ?? (status == 0 ? "CONNECTION_FAILED" : "HTTP_\(status)")
        tally.errors[code, default: 0] += 1
    }
}
