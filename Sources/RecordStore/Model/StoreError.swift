/// An error from the record store: a kind a caller can switch on, and a message a person can act on.
public struct StoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The error kinds, after CloudKit's `CKError.Code`.
    public enum Code: String, Hashable, Sendable, CaseIterable, Codable {
        /// A request or record exceeds a size or count limit; split and retry.
        case limitExceeded
        /// The change tag did not match; the error carries the server's record.
        case serverRecordChanged
        /// Another item of an atomic zone batch failed, so this one was not applied.
        case batchRequestFailed
        /// The user may not do this (read-only participant, another user's database).
        case permissionFailure
        /// The zone does not exist (or is not visible to this user).
        case zoneNotFound
        /// The record does not exist.
        case unknownItem
        /// The change token is older than the retention window (or from an earlier incarnation).
        case changeTokenExpired
        /// The request is malformed or not supported here (e.g. a query on the shared database).
        case invalidArguments
        /// Too many requests; retry after `retryAfter` seconds.
        case requestRateLimited
        /// The service is unavailable; retry after `retryAfter` seconds.
        case serviceUnavailable
        /// The zone is busy; retry with exponential backoff.
        case zoneBusy
        /// The item exists already (a second zone-wide share).
        case alreadyExists
        /// No or an unknown identity.
        case notAuthenticated
        /// Something broke inside the store.
        case internalError

        /// CloudKit Web Services' `serverErrorCode`, or one of ours where it has none.
        public var serverErrorCode: String {
            switch self {
            case .limitExceeded: return "LIMIT_EXCEEDED"
            case .serverRecordChanged: return "CONFLICT"
            case .batchRequestFailed: return "ATOMIC_ERROR"
            case .permissionFailure: return "ACCESS_DENIED"
            case .zoneNotFound: return "ZONE_NOT_FOUND"
            case .unknownItem: return "NOT_FOUND"
            case .changeTokenExpired: return "CHANGE_TOKEN_EXPIRED"
            case .invalidArguments: return "BAD_REQUEST"
            case .requestRateLimited: return "THROTTLED"
            case .serviceUnavailable: return "TRY_AGAIN_LATER"
            case .zoneBusy: return "ZONE_BUSY"
            case .alreadyExists: return "EXISTS"
            case .notAuthenticated: return "AUTHENTICATION_REQUIRED"
            case .internalError: return "INTERNAL_ERROR"
            }
        }

        /// The code for a Web Services `serverErrorCode`, for the remote client.
        public init?(serverErrorCode: String) {
            guard let code = Code.allCases.first(where: { $0.serverErrorCode == serverErrorCode }) else {
                if serverErrorCode == "AUTHENTICATION_FAILED" { self = .notAuthenticated; return }
                if serverErrorCode == "QUOTA_EXCEEDED" { self = .limitExceeded; return }
                return nil
            }
            self = code
        }

        /// Whether a client should retry the same request later.
        public var isRetryable: Bool {
            self == .requestRateLimited || self == .serviceUnavailable || self == .zoneBusy
        }
    }

    public var code: Code
    public var message: String
    /// Seconds to wait before retrying (`requestRateLimited`, `serviceUnavailable`).
    public var retryAfter: Double?
    /// The server's copy of the record (`serverRecordChanged`).
    public var serverRecord: Record?

    public init(_ code: Code, _ message: String, retryAfter: Double? = nil, serverRecord: Record? = nil) {
        self.code = code
        self.message = message
        self.retryAfter = retryAfter
        self.serverRecord = serverRecord
    }

    public var description: String {
        var s = "\(code.rawValue): \(message)"
        if let r = retryAfter { s += " (retry after \(r) s)" }
        return s
    }
}
