// The certificate fingerprint attribute, `a=fingerprint`, RFC 8122 §5 (hash function names
// from the IANA "Hash Function Textual Names" registry, digest as colon-separated hex).
import ZoneCore

/// The digest of a DTLS certificate that the peer's certificate must match.
public struct DTLSFingerprint: Hashable, Sendable, CustomStringConvertible {
    /// The hash function's textual name, lowercase: `sha-256`, `sha-1`, `sha-512`, ….
    public var hashFunction: String
    /// The digest of the DER-encoded certificate.
    public var digest: [UInt8]

    public init(hashFunction: String, digest: [UInt8]) {
        self.hashFunction = hashFunction.lowercased()
        self.digest = digest
    }

    /// The SHA-256 fingerprint of a DER-encoded certificate (what browsers use).
    public static func sha256(certificateDER: some Collection<UInt8>) -> DTLSFingerprint {
        DTLSFingerprint(hashFunction: "sha-256", digest: SHA256.hash(certificateDER))
    }

    /// The digest length each registered hash function produces; a fingerprint whose digest
    /// has another length cannot match any certificate, so the parser rejects it.
    static let digestLengths: [String: Int] = [
        "md2": 16, "md5": 16, "sha-1": 20, "sha-224": 28, "sha-256": 32, "sha-384": 48, "sha-512": 64,
    ]

    /// `<hash-func> <XX:XX:…>` with uppercase hex (RFC 8122 §5 writes UHEX).
    public var description: String {
        "\(hashFunction) \(Hex.encode(digest, separator: UInt8(ascii: ":"), uppercase: true))"
    }

    /// Reads an attribute value (`sha-256 AB:CD:…`).
    static func parse(_ value: ArraySlice<UInt8>) throws(SDPLineFailure) -> DTLSFingerprint {
        let parts = SDPGrammar.fields(value)
        guard parts.count == 2 else {
            throw SDPLineFailure(.invalidAttribute, "fingerprint needs a hash function name and a digest")
        }
        guard SDPGrammar.isToken(parts[0]) else {
            throw SDPLineFailure(.invalidAttribute, "fingerprint hash function is not a token")
        }
        let name = SDPGrammar.string(parts[0]).lowercased()
        var digest: [UInt8] = []
        for pair in SDPGrammar.split(parts[1], on: SDPGrammar.colon, omittingEmpty: false) {
            guard pair.count == 2, let byte = Hex.integer(pair, as: UInt8.self) else {
                throw SDPLineFailure(.invalidAttribute, "fingerprint digest must be pairs of hex digits joined by ':'")
            }
            digest.append(byte)
        }
        if let expected = digestLengths[name], expected != digest.count {
            throw SDPLineFailure(
                .invalidAttribute, "a \(name) fingerprint has \(expected) bytes, this one has \(digest.count)")
        }
        return DTLSFingerprint(hashFunction: name, digest: digest)
    }
}
