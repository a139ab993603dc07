import Testing
import RecordStore

@Suite("Store errors")
struct StoreErrorTests {
    @Test("every error code maps to a Web Services serverErrorCode; the codes read back to their first kind")
    func serverErrorCodes() {
        let expected: [StoreError.Code: String] = [
            .limitExceeded: "BAD_REQUEST", .serverRecordChanged: "CONFLICT", .batchRequestFailed: "ATOMIC_ERROR",
            .permissionFailure: "ACCESS_DENIED", .zoneNotFound: "ZONE_NOT_FOUND", .unknownItem: "NOT_FOUND",
            .changeTokenExpired: "CHANGE_TOKEN_EXPIRED", .invalidArguments: "BAD_REQUEST",
            .requestRateLimited: "THROTTLED", .serviceUnavailable: "TRY_AGAIN_LATER", .zoneBusy: "TRY_AGAIN_LATER",
            .alreadyExists: "EXISTS", .notAuthenticated: "AUTHENTICATION_REQUIRED", .internalError: "INTERNAL_ERROR",
            .authenticationFailed: "AUTHENTICATION_FAILED", .referenceViolation: "VALIDATING_REFERENCE_ERROR",
        ]
        // Kinds that share a code with an earlier one read back as that one (the wire's
        // `ckErrorCode` tells them apart).
        let shared: [StoreError.Code: StoreError.Code] = [.limitExceeded: .invalidArguments,
                                                          .zoneBusy: .serviceUnavailable]
        for code in StoreError.Code.allCases {
            #expect(code.serverErrorCode == expected[code])
            #expect(StoreError.Code(serverErrorCode: code.serverErrorCode) == shared[code] ?? code)
        }
        // The names this store used before, and Apple's QUOTA_EXCEEDED.
        #expect(StoreError.Code(serverErrorCode: "LIMIT_EXCEEDED") == .limitExceeded)
        #expect(StoreError.Code(serverErrorCode: "ZONE_BUSY") == .zoneBusy)
        #expect(StoreError.Code(serverErrorCode: "QUOTA_EXCEEDED") == .limitExceeded)
        #expect(StoreError.Code(serverErrorCode: "NO_SUCH_THING") == nil)
    }

    @Test("the kinds added last keep the trace numbering of the earlier ones")
    func appendedKinds() {
        #expect(Array(StoreError.Code.allCases.suffix(2)) == [.authenticationFailed, .referenceViolation])
        #expect(StoreError.Code.allCases.firstIndex(of: .internalError) == 13)
    }

    @Test("only throttling errors are retryable")
    func retryable() {
        #expect(StoreError.Code.allCases.filter(\.isRetryable).sorted { $0.rawValue < $1.rawValue }
                == [.requestRateLimited, .serviceUnavailable, .zoneBusy])
    }
}
