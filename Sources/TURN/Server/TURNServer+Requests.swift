import Foundation
import STUN
import ZoneCore

extension TURNServer {
    /// A request from a client: Binding (no authentication), or an authenticated TURN request.
    /// The answers go straight to `outputs`, in the order they are made.
    mutating func request(_ m: STUNMessage, raw: [UInt8], layout: STUNMessageLayout, tuple: FiveTuple,
                          now: Instant) {
        // RFC 8489 §6.3.1: unknown comprehension-required attributes → 420 listing them.
        let unknown = m.unknownComprehensionRequiredAttributes
        if !unknown.isEmpty {
            return fail(m, 420, "Unknown Attribute", extra: [.unknownAttributes(unknown)], key: nil, tuple: tuple)
        }
        if m.method == .binding {
            counters.bindings += 1
            guard let answer = respond(m.successResponse(attributes: [.xorMappedAddress(tuple.client)]), key: nil,
                                       tuple: tuple) else { return }
            outputs.append(answer)
            outputs.append(.event(.binding(client: tuple.client)))
            return
        }
        // Matched, not looked up in an array literal (which was allocated for every request).
        switch m.method {
        case .allocate, .refresh, .createPermission, .channelBind: break
        default: return fail(m, 400, "Bad Request", key: nil, tuple: tuple)
        }
        let key: STUNIntegrityKey
        let user: String
        let nonce: String
        switch authenticate(m, raw: raw, layout: layout, tuple: tuple, now: now) {
        case .challenged(let code, let reason, let failed):
            // RFC 8489 §9.2.4: 401 or 438 with REALM and a fresh NONCE.
            if failed { counters.authFailures += 1 } else { counters.challenges += 1 }
            return fail(m, code, reason, extra: [.realm(configuration.realm), .nonce(mintNonce(for: tuple, now: now))],
                        key: nil, tuple: tuple)
        case .malformed:
            return fail(m, 400, "Bad Request", key: nil, tuple: tuple)
        case .accepted(let k, let u, let n): key = k; user = u; nonce = n
        }
        switch m.method {
        case .allocate: return allocate(m, key: key, user: user, nonce: nonce, tuple: tuple, now: now)
        case .refresh: return refresh(m, key: key, user: user, tuple: tuple, now: now)
        case .createPermission: return createPermission(m, key: key, user: user, tuple: tuple, now: now)
        default: return channelBind(m, key: key, user: user, tuple: tuple, now: now)
        }
    }

    // MARK: Long-term credentials (RFC 8489 §9.2)

    /// What `authenticate` decided. A rejection is described, not wrapped in a closure that
    /// answers it: the closure and its captures were allocated for every challenge.
    enum AuthResult {
        case accepted(key: STUNIntegrityKey, user: String, nonce: String)
        /// Answer `code` with REALM and a new NONCE; `failed` when credentials were presented and
        /// did not check out (counted apart from the normal first-step challenge).
        case challenged(code: Int, reason: String, failed: Bool)
        /// USERNAME, REALM or NONCE missing beside MESSAGE-INTEGRITY: 400 (RFC 8489 §9.2.4).
        case malformed
    }

    private mutating func authenticate(_ m: STUNMessage, raw: [UInt8], layout: STUNMessageLayout, tuple: FiveTuple,
                                       now: Instant) -> AuthResult {
        // A request without credentials, or with a nonce that went stale, is the normal first step
        // (a challenge); credentials that do not check out are a failure worth counting apart.
        func challenge(_ code: Int, _ reason: String, _ failed: Bool) -> AuthResult {
            .challenged(code: code, reason: reason, failed: failed)
        }
        guard m.contains(.messageIntegrity) || m.contains(.messageIntegritySHA256) else {
            return challenge(401, "Unauthorized", false)
        }
        guard let username = m.username, let realm = m.realm, let nonce = m.nonce else {
            return .malformed
        }
        guard realm == configuration.realm else { return challenge(401, "Unauthorized", true) }
        // What the allocation of this 5-tuple, if any, has proved already: its nonce's signature
        // for this 5-tuple, and (static users, whose keys never change) its user's key.
        let proven = allocations.credentials(of: tuple)
        // A nonce minted for another 5-tuple is stale here too: a request captured on the wire and
        // replayed from elsewhere is challenged again (as coturn does) and allocates nothing.
        guard nonceIsFresh(nonce, for: tuple, now: now, signatureChecked: proven?.nonce == nonce) else {
            return challenge(438, "Stale Nonce", false)
        }
        let known: STUNIntegrityKey?
        if case .users = configuration.authentication, let proven, proven.user == username {
            known = proven.key
        } else {
            known = longTermKey(username: username, now: now)
        }
        guard let key = known else { return challenge(401, "Unauthorized", true) }
        guard (try? STUNIntegrity.verify(raw, layout: layout, key: key)) != nil else {
            return challenge(401, "Unauthorized", true)
        }
        // A new nonce (after a 438) is remembered once it has authenticated a request.
        if let proven, proven.nonce != nonce { allocations[tuple]?.verifiedNonce = nonce }
        return .accepted(key: key, user: username, nonce: nonce)
    }

    /// The key for a user, or nil when unknown or (REST credentials) expired.
    private mutating func longTermKey(username: String, now: Instant) -> STUNIntegrityKey? {
        switch configuration.authentication {
        case .users(let users):
            guard let password = users[username] else { return nil }
            if let k = keyCache[username] { return k }
            // Kept with its keyed HMAC states: every request of the user is verified and answered with it.
            guard let k = try? STUNIntegrityKey.longTerm(username: username, realm: configuration.realm,
                                                         password: password) else { return nil }
            keyCache[username] = k
            return k
        case .sharedSecret(let secret):
            // TURN REST API: "expiry:user", password base64(HMAC-SHA1(secret, username)).
            guard let expiry = Int64(username.split(separator: ":").first ?? ""),
                  expiry > now.nanosecondsSinceEpoch / 1_000_000_000 else { return nil }
            let password = Data(HMAC<SHA1>.authenticationCode(for: Array(username.utf8), key: Array(secret.utf8)))
                .base64EncodedString()
            return try? STUNIntegrityKey.longTerm(username: username, realm: configuration.realm, password: password)
        }
    }

    /// A nonce that carries its own expiry, signed with the server's nonce key together with the
    /// client's 5-tuple (its address and port, and the listening address it wrote to), so it needs
    /// no table and is good from that 5-tuple only (RFC 8489 §9.2: the server picks what a nonce
    /// binds; RFC 8656 §7.2 ties an allocation to its 5-tuple).
    func mintNonce(for tuple: FiveTuple, now: Instant) -> String {
        let expiry = UInt64(max(0, (now + configuration.nonceLifetime).nanosecondsSinceEpoch / 1_000_000_000))
        // Written as bytes into one buffer (stamp, dash, signature), then made a string once: every
        // challenge mints a nonce, and joining three strings cost more than the HMAC's own code.
        var text: [UInt8] = []
        text.reserveCapacity(33)
        // The stamp: the expiry in lower-case hex without leading zeros.
        Hex.append(expiry, to: &text)
        var signature = nonceSignature(text, tuple)
        text.append(UInt8(ascii: "-"))
        for _ in 0..<16 {
            text.append(Hex.digit(UInt8(truncatingIfNeeded: signature >> 60)))
            signature <<= 4
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The signature part of a nonce: the first 8 bytes of the HMAC of the stamp and the 5-tuple, as
    /// one big-endian number (a nonce carries it as 16 lower-case hex digits). The signed text is
    /// written as bytes: every request checks a nonce.
    private func nonceSignature(_ stamp: some Collection<UInt8>, _ tuple: FiveTuple) -> UInt64 {
        var signed: [UInt8] = []
        signed.reserveCapacity(stamp.count + 64)
        signed.append(contentsOf: stamp)
        signed.append(UInt8(ascii: "|"))
        tuple.client.appendDescription(to: &signed)
        signed.append(UInt8(ascii: "|"))
        tuple.server.appendDescription(to: &signed)
        var mac: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: room for SHA-1's 20
        withUnsafeMutableBytes(of: &mac) { out in
            signed.withUnsafeBytes { nonceMAC.authenticationCode(for: $0, into: out) }
        }
        return UInt64(bigEndian: mac.0)
    }

    /// Whether `nonce` was minted by this server for `tuple` and has not expired. The nonce is read
    /// as minted — a stamp of 1–16 hex digits, `-`, the signature — since every request
    /// carries one (anything else a client sends is simply not fresh). With `signatureChecked`, the
    /// caller knows this very nonce passed this check for `tuple` before (`Allocation.verifiedNonce`):
    /// only its form and expiry are checked, not its HMAC again.
    func nonceIsFresh(_ nonce: String, for tuple: FiveTuple, now: Instant, signatureChecked: Bool = false) -> Bool {
        // Read from the string's UTF-8 bytes, a byte at a time.
        var nonce = nonce
        let signed = nonce.withUTF8 { text -> UInt64? in
            guard let dash = text.firstIndex(of: UInt8(ascii: "-")) else { return nil }
            let stamp = UnsafeBufferPointer(rebasing: text[..<dash])
            // 1 to 16 digits: an expiry cannot overflow.
            guard let expiry = Hex.integer(stamp, as: UInt64.self) else { return nil }
            if !signatureChecked {
                // The rest must be exactly the 16 lower-case digits of the signature, compared digit by digit.
                let rest = UnsafeBufferPointer(rebasing: text[(dash + 1)...])
                guard rest.count == 16 else { return nil }
                var signature = nonceSignature(stamp, tuple)
                for byte in rest {
                    guard byte == Hex.digit(UInt8(truncatingIfNeeded: signature >> 60)) else { return nil }
                    signature <<= 4
                }
            }
            return expiry
        }
        guard let expiry = signed else { return false }
        // Compared unsigned: an expiry beyond Int64 (a forged stamp cannot get here, but no trap either way).
        let nowSeconds = UInt64(clamping: now.nanosecondsSinceEpoch / 1_000_000_000)
        return expiry > nowSeconds
    }

    // MARK: Allocate (RFC 8656 §7.2)

    private mutating func allocate(_ m: STUNMessage, key: STUNIntegrityKey, user: String, nonce: String,
                                   tuple: FiveTuple, now: Instant) {
        if let existing = allocations[tuple] {
            // A retransmission of the Allocate that made it gets the same success; anything else 437.
            if existing.transactionID == m.transactionID.bytes {
                return success(m, key: key, tuple: tuple, attributes: [
                    // What is left of it: zero (not a trap) if it expired and is not swept yet.
                    .xorRelayedAddress(existing.relay),
                    .lifetime(seconds: UInt32(max(0, (existing.expires - now).seconds.rounded()))),
                    .xorMappedAddress(tuple.client)])
            }
            return fail(m, 437, "Allocation Mismatch", key: key, tuple: tuple)
        }
        guard let transport = m.requestedTransport else {
            return fail(m, 400, "Bad Request: REQUESTED-TRANSPORT missing", key: key, tuple: tuple)
        }
        guard transport == STUNAttribute.transportUDP else {
            return fail(m, 442, "Unsupported Transport Protocol", key: key, tuple: tuple)
        }
        let token = m.reservationToken
        if token != nil && m.evenPort != nil {
            return fail(m, 400, "Bad Request: EVEN-PORT with RESERVATION-TOKEN", key: key, tuple: tuple)
        }
        if let family = m.requestedAddressFamily, family != configuration.relayAddress.family {
            return fail(m, 440, "Address Family not Supported", key: key, tuple: tuple)
        }
        if perUser[user, default: 0] >= configuration.maxAllocationsPerUser || allocations.count >= configuration.maxAllocations {
            return fail(m, 486, "Allocation Quota Reached", key: key, tuple: tuple)
        }
        var reserved: UInt64?
        let port: UInt16
        if let token {
            guard let r = reservations.removeValue(forKey: token), r.expires > now else {
                return fail(m, 508, "Insufficient Capacity: unknown reservation", key: key, tuple: tuple)
            }
            port = r.port
        } else if let reserveNext = m.evenPort {
            guard let p = pickPort(even: true, pairFree: reserveNext) else {
                return fail(m, 508, "Insufficient Capacity", key: key, tuple: tuple)
            }
            port = p
            if reserveNext {
                let t = random.next()
                reservations[t] = (p + 1, now + configuration.reservationLifetime)
                scheduleExpiry(reservation: t, at: now + configuration.reservationLifetime)
                usedPorts.insert(p + 1)
                reserved = t
            }
        } else {
            guard let p = pickPort(even: false, pairFree: false) else {
                return fail(m, 508, "Insufficient Capacity", key: key, tuple: tuple)
            }
            port = p
        }
        usedPorts.insert(port)
        let lifetime = grantedLifetime(m.lifetime)
        let relay = Endpoint(address: configuration.relayAddress, port: port)
        var allocation = Allocation(tuple: tuple, relay: relay, user: user, transactionID: m.transactionID.bytes,
                                    key: key, verifiedNonce: nonce, expires: now + lifetime)
        allocation.grantedSeconds = UInt32(lifetime.seconds)
        allocation.portIsFree = token == nil && m.evenPort == nil
        allocations[tuple] = allocation
        byRelay[relay] = tuple
        perUser[user, default: 0] += 1
        counters.allocations += 1
        counters.activeAllocations = allocations.count
        var attributes: [STUNAttribute] = [.xorRelayedAddress(relay), .lifetime(seconds: UInt32(lifetime.seconds)),
                                           .xorMappedAddress(tuple.client)]
        if let reserved { attributes.append(.reservationToken(reserved)) }
        guard case .toClient(let bytes, _, _)? = respond(m.successResponse(attributes: attributes), key: key, tuple: tuple) else {
            return
        }
        outputs.append(.openRelay(relay, response: bytes, client: tuple.client, via: tuple.server))
        outputs.append(.event(.allocated(user: user, client: tuple.client, relay: relay, lifetime: Int(lifetime.seconds))))
    }

    private func grantedLifetime(_ requested: UInt32?) -> Duration {
        guard let requested else { return configuration.defaultLifetime }
        let asked = Duration.seconds(Int64(requested))
        return min(max(asked, configuration.defaultLifetime), configuration.maxLifetime)
    }

    /// A free relay port (even when asked, with the next one free too when it is to be reserved).
    mutating func pickPort(even: Bool, pairFree: Bool) -> UInt16? {
        let range = configuration.relayPorts
        let span = Int(range.upperBound) - Int(range.lowerBound) + 1
        for _ in 0..<span {
            let p = nextPortCursor
            nextPortCursor = p >= range.upperBound ? range.lowerBound : p + 1
            if even && p % 2 != 0 { continue }
            if usedPorts.contains(p) { continue }
            if pairFree && (p == range.upperBound || usedPorts.contains(p + 1)) { continue }
            return p
        }
        return nil
    }

    // MARK: Refresh (§7.3), CreatePermission (§9), ChannelBind (§12)

    private mutating func refresh(_ m: STUNMessage, key: STUNIntegrityKey, user: String, tuple: FiveTuple,
                                  now: Instant) {
        guard allocations[tuple]?.user == user else {
            return fail(m, 437, "Allocation Mismatch", key: key, tuple: tuple)
        }
        if m.lifetime == 0 {
            // The answer leaves before the relayed socket closes.
            success(m, key: key, tuple: tuple, attributes: [.lifetime(seconds: 0)])
            release(tuple, reason: "refreshed with lifetime 0")
            return
        }
        let lifetime = grantedLifetime(m.lifetime)
        allocations[tuple]!.expires = now + lifetime
        return success(m, key: key, tuple: tuple, attributes: [.lifetime(seconds: UInt32(lifetime.seconds))])
    }

    private mutating func createPermission(_ m: STUNMessage, key: STUNIntegrityKey, user: String, tuple: FiveTuple,
                                           now: Instant) {
        guard allocations[tuple]?.user == user else {
            return fail(m, 437, "Allocation Mismatch", key: key, tuple: tuple)
        }
        let peers = m.xorPeerAddresses
        guard !peers.isEmpty else { return fail(m, 400, "Bad Request: XOR-PEER-ADDRESS missing", key: key, tuple: tuple) }
        let relayFamily = allocations[tuple]!.relay.family
        for peer in peers {
            if peer.unmapped.family != relayFamily { return fail(m, 443, "Peer Address Family Mismatch", key: key, tuple: tuple) }
            if !configuration.peerPolicy.permits(peer.address) { return fail(m, 403, "Forbidden", key: key, tuple: tuple) }
        }
        for peer in peers { allocations[tuple]!.permissions[peer.address.unmapped] = now + configuration.permissionLifetime }
        return success(m, key: key, tuple: tuple, attributes: [])
    }

    private mutating func channelBind(_ m: STUNMessage, key: STUNIntegrityKey, user: String, tuple: FiveTuple,
                                      now: Instant) {
        guard var a = allocations[tuple], a.user == user else {
            return fail(m, 437, "Allocation Mismatch", key: key, tuple: tuple)
        }
        guard let number = m.channelNumber, TURNServer.channelNumbers.contains(number) else {
            return fail(m, 400, "Bad Request: channel number outside 0x4000-0x7FFF", key: key, tuple: tuple)
        }
        guard let peer = m.xorPeerAddresses.first else {
            return fail(m, 400, "Bad Request: XOR-PEER-ADDRESS missing", key: key, tuple: tuple)
        }
        if peer.unmapped.family != a.relay.family { return fail(m, 443, "Peer Address Family Mismatch", key: key, tuple: tuple) }
        if !configuration.peerPolicy.permits(peer.address) { return fail(m, 403, "Forbidden", key: key, tuple: tuple) }
        // §12.2: a channel bound to another peer, or a peer bound to another channel, is refused.
        if let bound = a.channels[number], bound.peer != peer, bound.expires > now {
            return fail(m, 400, "Bad Request: channel bound to another peer", key: key, tuple: tuple)
        }
        if let other = a.channelByPeer[peer], other != number, (a.channels[other]?.expires ?? now) > now {
            return fail(m, 400, "Bad Request: peer bound to another channel", key: key, tuple: tuple)
        }
        a.channels[number] = (peer, now + configuration.channelLifetime)
        a.channelByPeer[peer] = number
        a.permissions[peer.address.unmapped] = now + configuration.permissionLifetime
        allocations[tuple] = a
        return success(m, key: key, tuple: tuple, attributes: [])
    }

    // MARK: Answers

    private mutating func success(_ m: STUNMessage, key: STUNIntegrityKey, tuple: FiveTuple,
                                  attributes: [STUNAttribute]) {
        if let a = respond(m.successResponse(attributes: attributes), key: key, tuple: tuple) { outputs.append(a) }
    }

    mutating func fail(_ m: STUNMessage, _ code: Int, _ reason: String, extra: [STUNAttribute] = [],
                       key: STUNIntegrityKey?, tuple: FiveTuple) {
        if let a = respond(m.errorResponse(code: code, reason: reason, attributes: extra), key: key, tuple: tuple) {
            outputs.append(a)
        }
        if code != 401 && code != 438 { outputs.append(.event(.refused(client: tuple.client, code: code, reason: reason))) }
    }
}
