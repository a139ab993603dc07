// A TURN client (RFC 8656 over UDP, in RFC 5766's classic form coturn speaks) as a sans-I/O
// machine: one allocation on one server.
//
// The caller feeds `handle(.datagram(bytes, from:) | .timer, now:)` and drains `pollOutput()`;
// it calls `handle(.timer, now:)` when `nextDeadline` is reached. The client never reads a
// clock, never opens a socket, and draws transaction IDs from its seed.
//
// What it does on its own:
//   - Allocate at creation (§7.1), with REQUESTED-TRANSPORT UDP and LIFETIME, answering the 401
//     challenge with long-term credentials (RFC 8489 §9.2) and 438 Stale Nonce with the new nonce;
//   - Refresh before the allocation expires (§8); `deallocate` refreshes with lifetime 0;
//   - `send(_:to:now:)`: CreatePermission for the peer's IP (§9), payloads queued (bounded) until
//     it exists, then Send indications (§11.1) and a ChannelBind (§12.1), ChannelData once bound
//     (§12.4); permissions and channels refreshed before they expire (300 s and 600 s);
//   - Data indications (§11.4) and ChannelData (§12.5) unwrapped into `.data(payload, from: peer)`;
//   - requests retransmitted with RTO (RFC 8489 §6.2.1); every failure reported with its code.

import STUN
import ZoneCore

/// A TURN client for one allocation.
public struct TURNClient {
    /// The `code` of failure events when no usable response came (timeout, unusable answer).
    public static let noResponseCode = 0

    /// The configuration the client was created with.
    public let configuration: TURNClientConfiguration
    /// Where the client stands.
    public internal(set) var phase: Phase = .allocating
    /// The relayed transport address, once allocated.
    public internal(set) var relayedAddress: Endpoint?
    /// The server-reflexive address the server saw, once allocated.
    public internal(set) var mappedAddress: Endpoint?
    /// When the allocation expires unless refreshed.
    public internal(set) var expiresAt: Instant?
    /// What was counted.
    public internal(set) var counters = Counters()

    var credentials: LongTermCredentials
    var transactions: [TURNTransaction] = []
    var refreshAt: Instant?
    var permissions: [IPAddress: TURNPermission] = [:]
    var channels: [Endpoint: TURNChannel] = [:]
    var peerByChannel: [UInt16: Endpoint] = [:]
    var nextChannelNumber = ChannelData.channelRange.lowerBound
    /// Payloads waiting for their peer's permission, oldest first.
    var queue = OutputQueue<(payload: [UInt8], peer: Endpoint)>()
    /// How many of them wait.
    var queued = 0
    /// When to send the Allocate again after a 437, and how many times it was sent again so far.
    var allocateRetry: (at: Instant?, count: Int) = (nil, 0)
    var random: SeededRandom
    private var outputs = OutputQueue<Output>()

    /// Creates the client and sends the first Allocate.
    public init(configuration: TURNClientConfiguration, now: Instant) {
        self.configuration = configuration
        credentials = LongTermCredentials(username: configuration.username, password: configuration.password)
        random = SeededRandom(seed: configuration.seed)
        startAllocate(now: now)
        updateDeadline()
    }

    /// Sends an Allocate (RFC 8656 §7.1): UDP relaying, the lifetime asked for.
    mutating func startAllocate(now: Instant) {
        var attributes: [STUNAttribute] = [.requestedTransport(protocolNumber: STUNAttribute.transportUDP)]
        if let lifetime = configuration.requestedLifetime { attributes.append(.lifetime(seconds: seconds(lifetime))) }
        start(.allocate, attributes: attributes, now: now)
    }

    // MARK: - Caller API

    /// Sends `payload` to `peer` through the relay: ChannelData when a channel is bound, a Send
    /// indication when only the permission exists, else queued until CreatePermission succeeds.
    /// Permission and channel are requested on first use.
    ///
    /// - Throws: `notAllocated` without an allocation, `peerFamilyMismatch`, `payloadTooLarge`.
    public mutating func send(_ payload: [UInt8], to peer: Endpoint, now: Instant) throws(TURNClientError) {
        defer { updateDeadline() }
        guard phase == .allocated, let relayed = relayedAddress else {
            throw TURNClientError(.notAllocated, "no allocation on \(configuration.server) to send through")
        }
        guard peer.unmapped.family == relayed.family else {
            throw TURNClientError(.peerFamilyMismatch, "peer \(peer) is not of the relayed address's family")
        }
        // A Send indication adds 36 bytes of header and attributes to the DATA value.
        guard payload.count <= 0xFFFF - 64 else {
            throw TURNClientError(.payloadTooLarge, "\(payload.count) bytes do not fit one TURN message")
        }
        createPermission(for: peer, now: now)
        let ip = peer.address.unmapped
        switch permissions[ip]?.state {
        case .installed?:
            transmitData(payload, to: peer, now: now)
        case .pending?:
            if queued >= configuration.maxQueuedPayloads {
                guard queue.pop() != nil else { counters.droppedPayloads += 1; return }
                queued -= 1
                counters.droppedPayloads += 1
            }
            queue.append((payload, peer))
            queued += 1
        case .failed?, nil:
            counters.droppedPayloads += 1
        }
    }

    /// Asks for a permission for `peer`'s IP address unless one exists or is on its way
    /// (a refused one is asked again after `permissionRetryDelay`).
    public mutating func createPermission(for peer: Endpoint, now: Instant) {
        defer { updateDeadline() }
        guard phase == .allocated else { return }
        let ip = peer.address.unmapped
        if let existing = permissions[ip] {
            guard case .failed(let retryAt) = existing.state, now >= retryAt else { return }
        }
        permissions[ip] = TURNPermission(peer: peer, state: .pending, requestInFlight: true)
        start(.createPermission(ip, peer: peer), attributes: [.xorPeerAddress(peer)], now: now)
    }

    /// Binds a channel to `peer` unless one is bound, on its way, or was refused.
    public mutating func bindChannel(to peer: Endpoint, now: Instant) {
        defer { updateDeadline() }
        guard phase == .allocated, channels[peer] == nil,
              nextChannelNumber <= ChannelData.channelRange.upperBound else { return }
        let number = nextChannelNumber
        nextChannelNumber += 1
        channels[peer] = TURNChannel(number: number, peer: peer, state: .pending, requestInFlight: true)
        peerByChannel[number] = peer
        start(.channelBind(channel: number, peer: peer),
              attributes: [.channelNumber(number), .xorPeerAddress(peer)], now: now)
    }

    /// Deletes the allocation: Refresh with LIFETIME 0 (RFC 8656 §8). `.deallocated` follows
    /// when the server answers (or the request times out). Queued payloads are dropped.
    public mutating func deallocate(now: Instant) {
        defer { updateDeadline() }
        switch phase {
        case .closed, .deallocating:
            return
        case .allocating:
            transactions.removeAll()
            close()
            push(.event(.deallocated))
        case .allocated:
            phase = .deallocating
            transactions.removeAll()
            dropQueue()
            start(.refresh(lifetime: 0), attributes: [.lifetime(seconds: 0)], now: now)
        }
    }

    /// Whether `bytes` is a response to one of the requests still waiting for an answer (a
    /// closing client's deallocation, say), so a caller with several clients on one socket can
    /// tell which one a datagram from the server is for. Reads the STUN header only (RFC 8489 §5).
    public func awaitsResponse(_ bytes: [UInt8]) -> Bool {
        guard phase != .closed, bytes.count >= STUNMessageHeader.size, bytes[0] & 0xC0 == 0 else { return false }
        switch STUNMessageType(rawValue: UInt16(bytes[0]) << 8 | UInt16(bytes[1])).messageClass {
        case .successResponse, .errorResponse: break
        case .request, .indication: return false
        }
        guard let id = STUNTransactionID(bytes: bytes[8..<20]) else { return false }
        return transactions.contains { $0.transactionID == id }
    }

    /// The channel bound to `peer`, if any.
    public func channel(for peer: Endpoint) -> UInt16? {
        guard let channel = channels[peer], channel.isBound else { return nil }
        return channel.number
    }

    /// True when a permission for `peer`'s IP address is installed.
    public func hasPermission(for peer: Endpoint) -> Bool {
        permissions[peer.address.unmapped]?.isInstalled ?? false
    }

    /// Feeds an input at `now`.
    public mutating func handle(_ input: Input, now: Instant) {
        defer { updateDeadline() }
        switch input {
        case .timer:
            onTimer(now: now)
        case .datagram(let bytes, let from):
            guard phase != .closed, from == configuration.server else {
                counters.ignored += 1
                return
            }
            onDatagram(bytes, now: now)
        }
    }

    /// The next output, or nil when there is nothing to do until the next input.
    public mutating func pollOutput() -> Output? {
        outputs.pop()
    }

    /// When to call `handle(.timer, now:)` next; nil when nothing is scheduled. Worked out at the
    /// end of every call that may change it.
    public private(set) var nextDeadline: Instant?

    private mutating func updateDeadline() {
        var next: Instant?
        func consider(_ instant: Instant?) {
            guard let instant else { return }
            if next == nil || instant < next! { next = instant }
        }
        for i in transactions.indices { consider(transactions[i].transaction.nextDeadline) }
        if phase == .allocating { consider(allocateRetry.at) }
        if phase == .allocated {
            consider(refreshAt)
            consider(expiresAt)
            for permission in permissions.values { consider(permission.deadline) }
            for channel in channels.values { consider(channel.deadline) }
        }
        nextDeadline = next
    }

    // MARK: - Timers

    private mutating func onTimer(now: Instant) {
        var i = 0
        while i < transactions.count {
            transactions[i].transaction.handle(.timer, now: now)
            if drainTransaction(at: i, retransmission: true) {
                i += 1
            } else {
                let transaction = transactions.remove(at: i)
                failed(transaction, code: TURNClient.noResponseCode,
                       reason: "no response from \(configuration.server) to \(transaction.kind.method)", now: now)
            }
        }
        if phase == .allocating, let retryAt = allocateRetry.at, now >= retryAt {
            allocateRetry.at = nil
            startAllocate(now: now)
        }
        guard phase == .allocated else { return }
        if let expiresAt, now >= expiresAt {
            lose(code: TURNClient.noResponseCode, reason: "the allocation expired before a Refresh succeeded")
            return
        }
        if let refreshAt, now >= refreshAt {
            self.refreshAt = nil
            var attributes: [STUNAttribute] = []
            if let lifetime = configuration.requestedLifetime {
                attributes.append(.lifetime(seconds: seconds(lifetime)))
            }
            start(.refresh(lifetime: configuration.requestedLifetime.map(seconds)), attributes: attributes, now: now)
        }
        for (ip, permission) in permissions {
            guard let due = permission.deadline, now >= due else { continue }
            permissions[ip]!.requestInFlight = true
            start(.createPermission(ip, peer: permission.peer), attributes: [.xorPeerAddress(permission.peer)],
                  now: now)
        }
        for (peer, channel) in channels {
            guard let due = channel.deadline, now >= due else { continue }
            channels[peer]!.requestInFlight = true
            start(.channelBind(channel: channel.number, peer: peer),
                  attributes: [.channelNumber(channel.number), .xorPeerAddress(peer)], now: now)
        }
    }

    // MARK: - Requests

    /// Sends a new request of `kind`, signed when the server has challenged us already.
    mutating func start(_ kind: TURNRequestKind, attributes: [STUNAttribute], now: Instant) {
        let request = STUNMessage(method: kind.method, messageClass: .request,
                                  transactionID: .random(using: &random), attributes: attributes)
        let encoded: (bytes: [UInt8], signed: Bool)
        do { encoded = try credentials.encode(request) } catch {
            failed(kind, code: TURNClient.noResponseCode, reason: "cannot encode \(kind.method): \(error)", now: now)
            return
        }
        transactions.append(TURNTransaction(kind: kind, request: request, bytes: encoded.bytes,
                                            signed: encoded.signed, now: now, timing: configuration.timing))
        _ = drainTransaction(at: transactions.count - 1, retransmission: false)
    }

    /// Sends what the transaction at `index` wants sent; false once it has timed out.
    private mutating func drainTransaction(at index: Int, retransmission: Bool) -> Bool {
        var alive = true
        while let output = transactions[index].transaction.pollOutput() {
            switch output {
            case .transmit(let bytes):
                if retransmission { counters.retransmissions += 1 }
                push(.transmit(bytes, to: configuration.server))
            case .timedOut:
                alive = false
            }
        }
        return alive
    }

    /// Sends `transaction` again as a new transaction with the credentials just learned.
    mutating func reissue(_ transaction: TURNTransaction, now: Instant) {
        var transaction = transaction
        var request = transaction.request
        request.transactionID = .random(using: &random)
        let encoded: (bytes: [UInt8], signed: Bool)
        do { encoded = try credentials.encode(request) } catch {
            failed(transaction, code: TURNClient.noResponseCode,
                   reason: "cannot encode \(transaction.kind.method): \(error)", now: now)
            return
        }
        transaction.reissue(id: request.transactionID, bytes: encoded.bytes, signed: encoded.signed, now: now)
        transactions.append(transaction)
        _ = drainTransaction(at: transactions.count - 1, retransmission: false)
    }

    // MARK: - Data out

    /// Sends a payload whose permission exists: ChannelData on a bound channel, else a Send
    /// indication, asking for a channel on first use.
    mutating func transmitData(_ payload: [UInt8], to peer: Endpoint, now: Instant) {
        if let channel = channels[peer], channel.isBound {
            guard let bytes = try? ChannelData(channel: channel.number, payload: payload).encode(padded: true) else {
                counters.droppedPayloads += 1
                return
            }
            counters.channelDataSent += 1
            push(.transmit(bytes, to: configuration.server))
            return
        }
        let indication = STUNMessage(method: .send, messageClass: .indication, transactionID: .random(using: &random),
                                     attributes: [.xorPeerAddress(peer), .data(payload)])
        guard let bytes = try? indication.encode(fingerprint: true) else {
            counters.droppedPayloads += 1
            return
        }
        counters.sendIndications += 1
        push(.transmit(bytes, to: configuration.server))
        bindChannel(to: peer, now: now)
    }

    /// Sends the queued payloads for `ip` now that its permission exists; the others wait on.
    mutating func flushQueue(for ip: IPAddress, now: Instant) {
        var waiting = OutputQueue<(payload: [UInt8], peer: Endpoint)>()
        while let item = queue.pop() {
            if item.peer.address.unmapped == ip {
                queued -= 1
                transmitData(item.payload, to: item.peer, now: now)
            } else {
                waiting.append(item)
            }
        }
        queue = waiting
    }

    /// Drops the queued payloads for `ip` (every one without `ip`).
    mutating func dropQueue(for ip: IPAddress? = nil) {
        var waiting = OutputQueue<(payload: [UInt8], peer: Endpoint)>()
        while let item = queue.pop() {
            if ip == nil || item.peer.address.unmapped == ip {
                queued -= 1
                counters.droppedPayloads += 1
            } else {
                waiting.append(item)
            }
        }
        queue = waiting
    }

    // MARK: - Ending

    /// The allocation is gone without our asking.
    mutating func lose(code: Int, reason: String) {
        close()
        push(.event(.allocationLost(code: code, reason: reason)))
    }

    /// Forgets everything: no more requests, refreshes or data.
    mutating func close() {
        phase = .closed
        transactions.removeAll()
        refreshAt = nil
        expiresAt = nil
        permissions.removeAll()
        channels.removeAll()
        peerByChannel.removeAll()
        allocateRetry.at = nil
        dropQueue()
    }

    mutating func push(_ output: Output) {
        outputs.append(output)
    }
}

/// Whole seconds for LIFETIME (RFC 8656 §18.2), clamped to its 32 bits.
func seconds(_ duration: Duration) -> UInt32 {
    UInt32(clamping: max(0, duration.nanoseconds / 1_000_000_000))
}

/// The one machine contract (`ZoneCore/SansIOMachine.swift`).
extension TURNClient: SansIOMachine {}
