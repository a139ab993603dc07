import Testing
import RecordStore

@Suite("Store errors")
struct StoreErrorTests {
    @Test("every error code maps to a Web Services serverErrorCode and back")
    func serverErrorCodes() {
        let expected: [StoreError.Code: String] = [
            .limitExceeded: "LIMIT_EXCEEDED", .serverRecordChanged: "CONFLICT", .batchRequestFailed: "ATOMIC_ERROR",
            .permissionFailure: "ACCESS_DENIED", .zoneNotFound: "ZONE_NOT_FOUND", .unknownItem: "NOT_FOUND",
            .changeTokenExpired: "CHANGE_TOKEN_EXPIRED", .invalidArguments: "BAD_REQUEST",
            .requestRateLimited: "THROTTLED", .serviceUnavailable: "TRY_AGAIN_LATER", .zoneBusy: "ZONE_BUSY",
            .alreadyExists: "EXISTS", .notAuthenticated: "AUTHENTICATION_REQUIRED", .internalError: "INTERNAL_ERROR",
        ]
        for code in StoreError.Code.allCases {
            #expect(code.serverErrorCode == expected[code])
            #expect(StoreError.Code(serverErrorCode: code.serverErrorCode) == code)
        }
        #expect(StoreError.Code(serverErrorCode: "AUTHENTICATION_FAILED") == .notAuthenticated)
        #expect(StoreError.Code(serverErrorCode: "NO_SUCH_THING") == nil)
    }

    @Test("only throttling errors are retryable")
    func retryable() {
        #expect(StoreError.Code.allCases.filter(\.isRetryable).sorted { $0.rawValue < $1.rawValue }
                == [.requestRateLimited, .serviceUnavailable, .zoneBusy])
    }
}
