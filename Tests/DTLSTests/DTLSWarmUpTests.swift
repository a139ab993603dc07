#if WebRTC
import DTLS
import Testing

// The process warm-up (`DTLSWarmUp`): one DTLS handshake in memory with one certificate on both
// sides, then SRTP under each profile. It must really complete — a warm-up that silently failed
// would leave the first call paying OpenSSL's and libsrtp2's first-use costs again.

@Suite struct DTLSWarmUpTests {
    @Test func theWarmUpHandshakeCompletesWithTheProcessCertificate() throws {
        #expect(DTLSWarmUp.run(certificate: try DTLSCertificate.forProcess()))
    }

    @Test func aFreshCertificateWarmsUpToo() throws {
        let certificate = try DTLSCertificate(commonName: "warm-up", validity: .seconds(3_600))
        #expect(DTLSWarmUp.run(certificate: certificate))
    }
}
#endif
