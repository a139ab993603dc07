#if WebRTC
// A certificate fingerprint as SDP carries it: RFC 8122 §5 (`a=fingerprint:sha-256 AB:CD:…`),
// RFC 8842 §5 (WebRTC uses SHA-256). Only SHA-256 is accepted: it is what every WebRTC endpoint
// sends, and a weaker hash would let a remote pick a forgeable one.

/// The SHA-256 fingerprint of a DER certificate, in SDP's `sha-256 AB:CD:…` form.
public struct DTLSFingerprint: Hashable, Sendable, CustomStringConvertible {
    /// The hash function's name as SDP spells it.
    public static let algorithm = "sha-256"
    /// The 32 digest bytes.
    public let digest: [UInt8]

    public init?(digest: [UInt8]) {
        guard digest.count == 32 else { return nil }
        self.digest = digest
    }

    /// Parses `sha-256 AB:CD:…` (the algorithm name case-insensitively, RFC 8122 §5).
    public init(parsing text: String) throws(DTLSFingerprintError) {
        let parts = text.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 2 else { throw DTLSFingerprintError("expected 'sha-256 AB:CD:…', got '\(text.prefix(120))'") }
        guard parts[0].lowercased() == DTLSFingerprint.algorithm else {
            throw DTLSFingerprintError("unsupported fingerprint algorithm '\(parts[0].prefix(20))' (only sha-256)")
        }
        let octets = parts[1].split(separator: ":", omittingEmptySubsequences: false)
        guard octets.count == 32 else {
            throw DTLSFingerprintError("a sha-256 fingerprint has 32 octets, this one \(octets.count)")
        }
        var digest: [UInt8] = []
        digest.reserveCapacity(32)
        for octet in octets {
            guard octet.count == 2, let value = UInt8(octet, radix: 16) else {
                throw DTLSFingerprintError("'\(octet.prefix(8))' is not a hex octet")
            }
            digest.append(value)
        }
        self.digest = digest
    }

    /// `sha-256 AB:CD:…`, upper-case hex as RFC 8122's grammar writes it.
    public var description: String {
        let hex = digest.map { byte in
            let text = String(byte, radix: 16, uppercase: true)
            return byte < 16 ? "0" + text : text
        }
        return "\(DTLSFingerprint.algorithm) \(hex.joined(separator: ":"))"
    }
}

/// A fingerprint that could not be read, and why.
public struct DTLSFingerprintError: Error, Hashable, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
#endif
