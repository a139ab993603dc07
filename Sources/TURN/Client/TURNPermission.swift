// Permissions, as the client keeps them: RFC 8656 §9 (CreatePermission, one per peer IP address,
// ports ignored, lifetime 300 s, refreshed by sending CreatePermission again) and §11 (data to or
// from a peer passes the relay only while a permission for its IP exists).

import ZoneCore

/// The client's view of the permission for one peer IP address.
struct TURNPermission {
    enum State: Hashable {
        /// CreatePermission sent, no answer yet: payloads for this IP wait in the queue.
        case pending
        /// The server installed it; refresh due at `refreshAt`.
        case installed(refreshAt: Instant)
        /// The server refused it, or never answered: sends are dropped until `retryAt`.
        case failed(retryAt: Instant)
    }

    /// The address put in XOR-PEER-ADDRESS (the first peer on this IP we sent to).
    let peer: Endpoint
    var state: State
    /// A CreatePermission for this IP is in flight (first one or a refresh).
    var requestInFlight: Bool

    var isInstalled: Bool { if case .installed = state { true } else { false } }

    /// When this permission next needs the client: its refresh, if nothing is in flight.
    var deadline: Instant? {
        guard !requestInFlight, case .installed(let refreshAt) = state else { return nil }
        return refreshAt
    }
}
