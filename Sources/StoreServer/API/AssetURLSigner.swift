import Foundation
import RecordStore
import ZoneCore

/// Signs and checks the upload URLs `assets/upload` hands out and the `downloadURL`s of answers, with
/// the key of the asset storage
/// (`AssetStorage.signingKey`) that every daemon sharing it reads: a URL one daemon handed out is
/// good on any of them, and after a restart, with nothing about it stored.
///
/// A token is, in unpadded base64url, `version (1) | lapses at (8, seconds since 1970, big-endian) |
/// nonce (16) | user (UTF-8) | MAC (16)`, the MAC the first 16 bytes of HMAC-SHA256 over the rest.
/// The upload's receipt is derived from the token by another HMAC, so a second upload with one token
/// finds its receipt kept already (`AssetStorage.keep` answers false) on whichever daemon it reaches:
/// one upload per URL. Neither the token nor the key is ever handed to another user; the receipt
/// cannot be turned back into the token.
///
/// A download URL carries `?expires=<seconds since 1970>&signature=<base64url of 16 bytes>`, the
/// signature an HMAC over the receipt and the lapse time: a reader of the record gets a URL good for
/// `downloadLifetime`, and a fresh one with every answer carrying the record (docs/CLOUDKIT.md says why).
struct AssetURLSigner: Sendable {
    /// How long an upload URL is good for.
    static let uploadLifetime: TimeInterval = 3600
    /// How long a download URL is good for after the answer that carried it.
    static let downloadLifetime: TimeInterval = 3600
    static let version: UInt8 = 1
    static let macSize = 16
    static let nonceSize = 16
    /// Longer tokens are not decoded (a user name is far shorter).
    static let maxTokenLength = 1024

    /// What a checked upload token allows.
    struct Upload: Equatable {
        /// The user it was handed to: the upload's owner.
        let user: String
        /// The receipt the upload is kept under.
        let receipt: String
    }

    private let mac: HMAC<SHA256>

    init(key: [UInt8]) { mac = HMAC(key: key) }

    /// A new upload token for `user`, lapsing at `expires`.
    func uploadToken(user: String, expires: Date) -> String {
        var payload: [UInt8] = [Self.version]
        Self.append(Self.seconds(expires), to: &payload)
        var random = SystemRandomNumberGenerator()
        for _ in 0..<Self.nonceSize { payload.append(random.next()) }
        payload += Array(user.utf8)
        return Base64URL.encode(payload + tag(payload))
    }

    /// The upload `token` allows at `now`, or nil when it is not one this storage's key signed, or
    /// has lapsed. Whether it was used is the storage's answer to keeping its receipt.
    func checkUpload(_ token: String, now: Date) -> Upload? {
        let fixed = 1 + 8 + Self.nonceSize
        guard token.utf8.count <= Self.maxTokenLength, let bytes = Base64URL.decode(token),
              bytes.count >= fixed + Self.macSize, bytes[0] == Self.version else { return nil }
        let payload = Array(bytes.dropLast(Self.macSize))
        guard APITokens.constantTimeEquals(tag(payload), Array(bytes.suffix(Self.macSize))) else { return nil }
        let seconds = payload[1...8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        guard Double(seconds) > now.timeIntervalSince1970,
              let user = String(validating: payload[fixed...], as: UTF8.self) else { return nil }
        return Upload(user: user, receipt: Hex.encode(derive("receipt", payload).prefix(16)))
    }

    /// What a download URL's signature says.
    enum Download: Equatable {
        /// Signed for this receipt, and not lapsed.
        case valid
        /// Signed for this receipt, lapsed: the reader fetches the record again.
        case lapsed
        /// Unsigned, or not signed with this key for this receipt and time.
        case forged
    }

    /// The query of a download URL of `receipt` lapsing at `expires`.
    func downloadQuery(receipt: String, expires: Date) -> String {
        let seconds = Self.seconds(expires)
        return "?expires=\(seconds)&signature=\(Base64URL.encode(downloadTag(receipt, seconds)))"
    }

    /// Checks a download URL's `expires` and `signature` for `receipt` at `now`.
    func checkDownload(receipt: String, expires: String?, signature: String?, now: Date) -> Download {
        guard let expires, expires.utf8.count <= 20, let seconds = UInt64(expires),
              let signature, signature.utf8.count <= 64, let given = Base64URL.decode(signature),
              APITokens.constantTimeEquals(downloadTag(receipt, seconds), given) else { return .forged }
        return Double(seconds) > now.timeIntervalSince1970 ? .valid : .lapsed
    }

    private func downloadTag(_ receipt: String, _ seconds: UInt64) -> [UInt8] {
        var message = Array(receipt.utf8)
        Self.append(seconds, to: &message)
        return Array(derive("download", message).prefix(Self.macSize))
    }

    /// A lapse time as whole seconds since 1970, rounded up.
    private static func seconds(_ date: Date) -> UInt64 { UInt64(max(0, date.timeIntervalSince1970.rounded(.up))) }

    /// `value` as 8 bytes, big-endian.
    private static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: value >> shift)) }
    }

    private func tag(_ payload: [UInt8]) -> [UInt8] { Array(derive("upload", payload).prefix(Self.macSize)) }

    /// HMAC over a label naming the use and the payload, so one key serves each use apart.
    private func derive(_ label: String, _ payload: [UInt8]) -> [UInt8] {
        mac.authenticationCode(for: Array(label.utf8) + [0] + payload)
    }
}
