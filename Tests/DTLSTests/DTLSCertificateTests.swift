#if WebRTC
import DTLS
import SDP
import Testing
import ZoneCore

// The per-process certificate and the fingerprints checked against it: SDP's own fingerprint type
// (the SDP module), computed by OpenSSL and checked here against our own SHA-256 of the DER.

@Suite struct DTLSCertificateTests {
    @Test func theProcessCertificateIsMadeOnceAndItsFingerprintIsTheSHA256OfItsDER() throws {
        let first = try DTLSCertificate.forProcess()
        let second = try DTLSCertificate.forProcess()
        #expect(first === second)
        #expect(first.fingerprint == DTLSFingerprint.sha256(certificateDER: first.der))
        #expect("\(first.fingerprint)".hasPrefix("sha-256 "))
    }

    @Test func aSHA1FingerprintIsCheckedWithSHA1() throws {
        let sha1 = DTLSFingerprint(hashFunction: "sha-1", digest: SHA1.hash(DTLSPair.serverCertificate.der))
        let pair = try DTLSPair(clientExpects: sha1)
        pair.start()
        #expect(pair.bothConnected)
        #expect(pair.client.remoteFingerprint == sha1)
    }

    @Test func anMD5FingerprintIsRefusedWithTheReason() throws {
        let md5 = DTLSFingerprint(hashFunction: "md5", digest: MD5.hash(DTLSPair.serverCertificate.der))
        let pair = try DTLSPair(clientExpects: md5)
        pair.start()
        #expect(pair.client.state == .failed(.unusableFingerprint(hashFunction: "md5")))
        #expect(pair.clientKeys == nil && pair.serverKeys == nil)
    }
}
#endif
