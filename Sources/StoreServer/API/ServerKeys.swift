import Foundation
import ZoneCore

/// Checks an ECDSA signature with one public key; the OpenSSL implementation is in builds with the
/// `WebRTC` trait (`ECDSAP256Verifier`), so a plain build carries no key code and refuses keys.
public protocol SignatureVerifier: Sendable {
    /// Whether `signature` (DER, as OpenSSL and Apple's tools write it) signs `message`.
    func verify(message: [UInt8], signature: [UInt8]) -> Bool
}

/// The container's server-to-server keys (`zonertc store serve --server-key KEYID=PEM-FILE`).
///
/// CloudKit Web Services Reference, "Accessing CloudKit Using a Server-to-Server Key"
/// (SettingUpWebServices.html): a request carries `X-Apple-CloudKit-Request-KeyID`,
/// `X-Apple-CloudKit-Request-ISO8601Date` and `X-Apple-CloudKit-Request-SignatureV1`, the base64 ECDSA
/// (P-256, SHA-256) signature of `[date]:[base64 of the body's SHA-256]:[the URL's path]`. Here a
/// signed request acts as the user the operator named for the keys (`--server-key-user`).
public final class ServerKeys: Sendable {
    /// How far a request's date may be from the daemon's clock, either way. A signed request can be
    /// replayed within it (Apple's page gives no figure; the signature covers date, body and path).
    public static let maxClockSkew: TimeInterval = 600

    private let keys: [String: any SignatureVerifier]
    /// The user the keys' requests act as.
    public let user: String

    public init(_ keys: [String: any SignatureVerifier] = [:], user: String = "") {
        self.keys = keys
        self.user = user
    }

    public var isEmpty: Bool { keys.isEmpty }

    /// Whether the request carries any of the three headers (then it is judged by them alone).
    static func signed(_ request: HTTPRequest) -> Bool {
        request.headers["X-Apple-CloudKit-Request-KeyID"] != nil
            || request.headers["X-Apple-CloudKit-Request-SignatureV1"] != nil
    }

    /// The user a signed request acts as, or why it is refused.
    func verify(_ request: HTTPRequest, now: Date) -> Result<String, Refusal> {
        guard let keyID = request.headers["X-Apple-CloudKit-Request-KeyID"], keyID.utf8.count <= 256,
              let dateText = request.headers["X-Apple-CloudKit-Request-ISO8601Date"], dateText.utf8.count <= 64,
              let signatureText = request.headers["X-Apple-CloudKit-Request-SignatureV1"],
              signatureText.utf8.count <= 512 else {
            return .failure(Refusal("a server-to-server request needs X-Apple-CloudKit-Request-KeyID, -ISO8601Date "
                                    + "and -SignatureV1"))
        }
        guard let verifier = keys[keyID] else { return .failure(Refusal("unknown server-to-server key")) }
        guard let date = ISO8601DateFormatter().date(from: dateText),
              abs(date.timeIntervalSince(now)) <= Self.maxClockSkew else {
            return .failure(Refusal("X-Apple-CloudKit-Request-ISO8601Date is not an ISO 8601 date within 10 minutes"))
        }
        guard let signature = Data(base64Encoded: signatureText) else {
            return .failure(Refusal("X-Apple-CloudKit-Request-SignatureV1 is not base64"))
        }
        let message = Self.message(date: dateText, body: request.body, path: request.path)
        guard verifier.verify(message: message, signature: Array(signature)) else {
            return .failure(Refusal("the signature does not match the request"))
        }
        return .success(user)
    }

    /// Why a signed request is refused (`401 AUTHENTICATION_FAILED`).
    struct Refusal: Error {
        var reason: String
        init(_ reason: String) { self.reason = reason }
    }

    /// What a key signs: `date:base64(SHA-256(body)):path`.
    public static func message(date: String, body: [UInt8], path: String) -> [UInt8] {
        let bodyHash = Data(SHA256.hash(body)).base64EncodedString()
        return Array("\(date):\(bodyHash):\(path)".utf8)
    }
}
