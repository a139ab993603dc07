// What the client does with the server's datagrams: responses to its requests (RFC 8656 §7.3
// Allocate, §8 Refresh, §9 CreatePermission, §12 ChannelBind; RFC 8489 §9.2.5 challenges),
// Data indications (§11.4) and ChannelData (§12.5). Nothing the server sends can trap: whatever
// does not decode, or lacks what its kind needs, is counted and dropped or fails its request.

import STUN
import ZoneCore

extension TURNClient {
    mutating func onDatagram(_ bytes: [UInt8], now: Instant) {
        switch PacketDemultiplexer.classify(bytes) {
        case .turnChannel:
            onChannelData(bytes)
        case .stun:
            // The layout is kept: a response's MESSAGE-INTEGRITY is checked without scanning it again.
            guard let layout = try? STUNMessageLayout(scanning: bytes),
                  let message = try? STUNMessage(decoding: bytes, layout: layout) else {
                counters.malformed += 1
                return
            }
            switch message.messageClass {
            case .indication:
                onIndication(message)
            case .successResponse, .errorResponse:
                onResponse(message, bytes: bytes, layout: layout, now: now)
            case .request:
                counters.ignored += 1  // servers do not ask clients anything
            }
        default:
            counters.malformed += 1
        }
    }

    // MARK: - Data in

    private mutating func onChannelData(_ bytes: [UInt8]) {
        guard let frame = try? ChannelData(decoding: bytes) else {
            counters.malformed += 1
            return
        }
        // A channel whose bind is still unanswered counts: the server may have bound it and
        // relayed data before its success response reached us.
        guard let peer = peerByChannel[frame.channel], let channel = channels[peer], channel.state != .failed else {
            counters.ignored += 1
            return
        }
        push(.event(.data(frame.payload, from: peer)))
    }

    private mutating func onIndication(_ message: STUNMessage) {
        guard message.method == .data else {
            counters.ignored += 1
            return
        }
        guard let peer = message.xorPeerAddresses.first, let data = message.data else {
            counters.malformed += 1  // §11.4: without XOR-PEER-ADDRESS or DATA it is discarded
            return
        }
        push(.event(.data(data, from: peer)))
    }

    // MARK: - Responses

    private mutating func onResponse(_ message: STUNMessage, bytes: [UInt8], layout: STUNMessageLayout, now: Instant) {
        guard let index = transactions.firstIndex(where: { $0.transactionID == message.transactionID }),
              transactions[index].kind.method == message.method
        else {
            counters.ignored += 1  // late retransmission, or a stray
            return
        }
        guard credentials.isAuthentic(message, bytes: bytes, layout: layout,
                                      requestWasSigned: transactions[index].signed) else {
            counters.ignored += 1  // a forgery: keep waiting for the real answer
            return
        }
        let transaction = transactions.remove(at: index)
        if message.messageClass == .errorResponse {
            let error = message.errorCode ?? STUNErrorCode(code: 400, reason: "error response without ERROR-CODE")
            if error.code == STUNErrorCode.unauthenticated || error.code == STUNErrorCode.staleNonce,
               challenged(transaction, by: message, code: error.code, now: now) {
                return
            }
            // coturn ends its reason phrases with a NUL; people reading the event need not see it.
            failed(transaction, code: error.code, reason: String(error.reason.unicodeScalars.filter { $0 != "\0" }),
                   now: now)
            return
        }
        switch transaction.kind {
        case .allocate:
            allocated(message, now: now)
        case .refresh(let lifetime):
            refreshed(message, requested: lifetime, now: now)
        case .createPermission(let ip, _):
            permissionInstalled(ip, now: now)
        case .channelBind(let number, let peer):
            channelBound(number, peer: peer, now: now)
        }
    }

    /// A 401 or 438 (RFC 8489 §9.2.5): retry with the realm and nonce it carries when that can
    /// help. A 401 to a request we signed under the same realm means the credentials are wrong.
    /// Returns false when the request has failed instead.
    private mutating func challenged(_ transaction: TURNTransaction, by message: STUNMessage, code: Int,
                                     now: Instant) -> Bool {
        guard let realm = message.realm, let nonce = message.nonce,
              transaction.challenges < configuration.maxChallenges else { return false }
        if code == STUNErrorCode.unauthenticated, transaction.signed, realm == credentials.realm {
            return false
        }
        do { try credentials.accept(realm: realm, nonce: nonce) } catch { return false }
        reissue(transaction, now: now)
        return true
    }

    private mutating func allocated(_ message: STUNMessage, now: Instant) {
        guard phase == .allocating else { return }
        guard let relayed = message.xorRelayedAddress, let mapped = message.xorMappedAddress else {
            fail(allocation: "the Allocate success response lacks XOR-RELAYED-ADDRESS or XOR-MAPPED-ADDRESS")
            return
        }
        let lifetime = Duration.seconds(Int64(message.lifetime ?? 600))
        guard lifetime > .zero else {
            fail(allocation: "the Allocate success response grants a lifetime of 0")
            return
        }
        phase = .allocated
        relayedAddress = relayed
        mappedAddress = mapped
        schedule(lifetime: lifetime, now: now)
        push(.event(.allocated(relayed: relayed, mapped: mapped)))
    }

    private mutating func fail(allocation reason: String) {
        close()
        push(.event(.allocationFailed(code: TURNClient.noResponseCode, reason: reason)))
    }

    private mutating func refreshed(_ message: STUNMessage, requested: UInt32?, now: Instant) {
        if requested == 0 {
            guard phase == .deallocating else { return }
            close()
            push(.event(.deallocated))
            return
        }
        guard phase == .allocated else { return }
        let granted = Duration.seconds(Int64(message.lifetime ?? requested ?? 600))
        guard granted > .zero else {
            lose(code: TURNClient.noResponseCode, reason: "the server answered a Refresh with a lifetime of 0")
            return
        }
        schedule(lifetime: granted, now: now)
        push(.event(.refreshed(lifetime: granted)))
    }

    /// The allocation lives `lifetime` from `now`; refresh a margin before that.
    private mutating func schedule(lifetime: Duration, now: Instant) {
        expiresAt = now + lifetime
        let margin = min(configuration.allocationRefreshMargin, lifetime / 2)
        refreshAt = now + lifetime - margin
    }

    private mutating func permissionInstalled(_ ip: IPAddress, now: Instant) {
        guard phase == .allocated, var permission = permissions[ip] else { return }
        let first = !permission.isInstalled
        permission.state = .installed(refreshAt: now + configuration.permissionRefreshInterval)
        permission.requestInFlight = false
        permissions[ip] = permission
        if first { push(.event(.permissionCreated(ip))) }
        flushQueue(for: ip, now: now)
    }

    private mutating func channelBound(_ number: UInt16, peer: Endpoint, now: Instant) {
        guard phase == .allocated, var channel = channels[peer], channel.number == number else { return }
        let first = !channel.isBound
        channel.state = .bound(refreshAt: now + configuration.channelRefreshInterval)
        channel.requestInFlight = false
        channels[peer] = channel
        // ChannelBind installs or refreshes the permission too (RFC 8656 §12.2).
        if var permission = permissions[peer.address.unmapped], case .installed = permission.state,
           !permission.requestInFlight {
            permission.state = .installed(refreshAt: now + configuration.permissionRefreshInterval)
            permissions[peer.address.unmapped] = permission
        }
        if first { push(.event(.channelBound(channel: number, peer: peer))) }
    }

    // MARK: - Failures

    /// A request failed: error response, challenge that could not be answered, or timeout.
    mutating func failed(_ transaction: TURNTransaction, code: Int, reason: String, now: Instant) {
        failed(transaction.kind, code: code, reason: reason, now: now)
    }

    mutating func failed(_ kind: TURNRequestKind, code: Int, reason: String, now: Instant) {
        switch kind {
        case .allocate:
            guard phase == .allocating else { return }
            if code == STUNErrorCode.allocationMismatch, allocateRetry.count < configuration.allocationMismatchRetries {
                let backoff = configuration.timing.initialRTO * (1 << allocateRetry.count)
                allocateRetry = (now + backoff, allocateRetry.count + 1)
                push(.event(.requestFailed(method: .allocate, peer: nil, code: code, reason: reason)))
                return
            }
            close()
            push(.event(.allocationFailed(code: code, reason: reason)))
        case .refresh(let lifetime):
            if lifetime == 0 {
                // Gone either way: 437 says there was nothing left; a timeout leaves it to expire.
                guard phase == .deallocating else { return }
                close()
                push(.event(.deallocated))
                return
            }
            guard phase == .allocated else { return }
            if code == STUNErrorCode.allocationMismatch {
                lose(code: code, reason: reason)
                return
            }
            push(.event(.requestFailed(method: .refresh, peer: nil, code: code, reason: reason)))
            // Try again halfway to the expiry, while there is time.
            if let expiresAt, expiresAt > now { refreshAt = now + (expiresAt - now) / 2 }
        case .createPermission(let ip, let peer):
            guard phase == .allocated else { return }
            if code == STUNErrorCode.allocationMismatch {
                lose(code: code, reason: reason)
                return
            }
            let retryAt = now + configuration.permissionRetryDelay
            permissions[ip] = TURNPermission(peer: peer, state: .failed(retryAt: retryAt), requestInFlight: false)
            dropQueue(for: ip)
            push(.event(.requestFailed(method: .createPermission, peer: peer, code: code, reason: reason)))
        case .channelBind(let number, let peer):
            guard phase == .allocated else { return }
            if code == STUNErrorCode.allocationMismatch {
                lose(code: code, reason: reason)
                return
            }
            channels[peer] = TURNChannel(number: number, peer: peer, state: .failed, requestInFlight: false)
            push(.event(.requestFailed(method: .channelBind, peer: peer, code: code, reason: reason)))
        }
    }
}
