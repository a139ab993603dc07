/// An error from the record store: a kind a caller can switch on, and a message a person can act on.
public struct StoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The error kinds, after CloudKit's `CKError.Code`.
    public enum Code: String, Hashable, Sendable, CaseIterable, Codable {
        /// A request or record exceeds a size or count limit; split and retry.
        case limitExceeded
        /// The change tag did not match, or a record to create exists; the error carries the
        /// server's record.
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
        /// No credentials where a user is needed.
        case notAuthenticated
        /// Something broke inside the store.
        case internalError
        // Cases added later go last: the simulator's trace numbers a failure by its code's position.
        /// The credentials named no known user (CloudKit Web Services `AUTHENTICATION_FAILED`).
        case authenticationFailed
        /// A `VALIDATE` reference's target is missing, or a record still referred to that way was to
        /// be deleted (CKError `referenceViolation`; Web Services `VALIDATING_REFERENCE_ERROR`).
        case referenceViolation

        /// CloudKit Web Services' `serverErrorCode` (Error Codes,
        /// developer.apple.com/library/archive/…/CloudKitWebServicesReference/ErrorCodes.html),
        /// or one of ours where it has none (`CHANGE_TOKEN_EXPIRED`). Kinds the Web Services table
        /// has no name for go under the nearest one: a request over a Data Size Limit is
        /// `BAD_REQUEST`, a busy zone `TRY_AGAIN_LATER`; the kind itself travels beside it (the
        /// wire format's `ckErrorCode`).
        public var serverErrorCode: String {
            switch self {
            case .limitExceeded: return "BAD_REQUEST"
            case .serverRecordChanged: return "CONFLICT"
            case .batchRequestFailed: return "ATOMIC_ERROR"
            case .permissionFailure: return "ACCESS_DENIED"
            case .zoneNotFound: return "ZONE_NOT_FOUND"
            case .unknownItem: return "NOT_FOUND"
            case .changeTokenExpired: return "CHANGE_TOKEN_EXPIRED"
            case .invalidArguments: return "BAD_REQUEST"
            case .requestRateLimited: return "THROTTLED"
            case .serviceUnavailable: return "TRY_AGAIN_LATER"
            case .zoneBusy: return "TRY_AGAIN_LATER"
            case .alreadyExists: return "EXISTS"
            case .notAuthenticated: return "AUTHENTICATION_REQUIRED"
            case .internalError: return "INTERNAL_ERROR"
            case .authenticationFailed: return "AUTHENTICATION_FAILED"
            case .referenceViolation: return "VALIDATING_REFERENCE_ERROR"
            }
        }

        /// The kind a `serverErrorCode` means when nothing more precise comes with it (several
        /// kinds share `BAD_REQUEST` and `TRY_AGAIN_LATER`); nil for a code this store never sends.
        public init?(serverErrorCode: String) {
            switch serverErrorCode {
            case "BAD_REQUEST": self = .invalidArguments
            case "TRY_AGAIN_LATER": self = .serviceUnavailable
            case "QUOTA_EXCEEDED": self = .limitExceeded
            // Names this store used before it answered with Web Services' codes alone.
            case "LIMIT_EXCEEDED": self = .limitExceeded
            case "ZONE_BUSY": self = .zoneBusy
            default:
                guard let code = Code.allCases.first(where: { $0.serverErrorCode == serverErrorCode }) else {
                    return nil
                }
                self = code
            }
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
