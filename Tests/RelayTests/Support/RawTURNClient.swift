import Net
import STUN
import ZoneCore

/// A bare TURN client for tests: builds requests by hand with the STUN codecs and waits for the
/// answer with the same transaction ID. Blocking (poll with a timeout): call it off the pool.
/// It exists to send exactly what a test wants, well-formed or not; it is not ZoneRTC's client.
final class RawTURNClient {
    let socket: UDPSocket
    let server: Endpoint
    var user: String
    var password: String
    var realm: String
    var nonce: String?
    var rng: SeededRandom

    init(server: Endpoint, user: String = "u", password: String = "p", realm: String = "r", seed: UInt64 = 1) throws {
        socket = try UDPSocket(bind: try Endpoint(parsing: "127.0.0.1:0"))
        self.server = server
        self.user = user
        self.password = password
        self.realm = realm
        rng = SeededRandom(seed: seed)
    }

    var key: STUNIntegrityKey { try! STUNIntegrityKey.longTerm(username: user, realm: realm, password: password) }

    /// A request's bytes: signed with the long-term key once a nonce is known (unless `sign` is false).
    func encode(_ method: STUNMethod, _ attributes: [STUNAttribute], sign: Bool = true) -> (STUNMessage, [UInt8]) {
        var all = attributes
        var key: STUNIntegrityKey?
        if sign, let nonce {
            all += [.username(user), .realm(realm), .nonce(nonce)]
            key = self.key
        }
        let m = STUNMessage(method: method, messageClass: .request, transactionID: .random(using: &rng),
                            attributes: all)
        return (m, try! m.encode(key: key, fingerprint: true))
    }

    /// Sends `bytes` and waits for the response to `id`, ignoring anything else that arrives.
    func exchange(_ bytes: [UInt8], id: STUNTransactionID, timeoutMilliseconds: Int32 = 2000) -> STUNMessage? {
        guard socket.send(bytes, to: server) else { return nil }
        for _ in 0..<50 {
            guard let (reply, _) = socket.receive(timeoutMilliseconds: timeoutMilliseconds) else { return nil }
            if let m = try? STUNMessage(decoding: reply), m.transactionID == id { return m }
        }
        return nil
    }

    /// A request; on 401/438 it takes the nonce and tries once more.
    func request(_ method: STUNMethod, _ attributes: [STUNAttribute]) -> STUNMessage? {
        let (m, bytes) = encode(method, attributes)
        guard let reply = exchange(bytes, id: m.transactionID) else { return nil }
        if let code = reply.errorCode?.code, code == 401 || code == 438, let fresh = reply.nonce, fresh != nonce {
            nonce = fresh
            let (again, bytes) = encode(method, attributes)
            return exchange(bytes, id: again.transactionID)
        }
        return reply
    }

    /// Allocate (with the challenge round trip); the relayed address, or the error code.
    func allocate(_ extra: [STUNAttribute] = []) -> Result<Endpoint, AllocateFailure> {
        guard let reply = request(.allocate, [.requestedTransport(protocolNumber: 17)] + extra) else {
            return .failure(AllocateFailure(code: 0))
        }
        if let relay = reply.xorRelayedAddress { return .success(relay) }
        return .failure(AllocateFailure(code: reply.errorCode?.code ?? -1))
    }

    struct AllocateFailure: Error, Equatable { var code: Int }

    func permit(_ peer: Endpoint) -> Bool {
        request(.createPermission, [.xorPeerAddress(peer)])?.messageClass == .successResponse
    }

    func bind(channel: UInt16, to peer: Endpoint) -> STUNMessage? {
        request(.channelBind, [.channelNumber(channel), .xorPeerAddress(peer)])
    }

    func release() -> Bool { request(.refresh, [.lifetime(seconds: 0)])?.messageClass == .successResponse }
}
