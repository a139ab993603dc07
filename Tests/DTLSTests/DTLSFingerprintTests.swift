#if WebRTC
import DTLS
import Testing

@Suite struct DTLSFingerprintTests {
    static let text = "sha-256 " + (0..<32).map { i in
        let hex = String(UInt8(i * 7), radix: 16, uppercase: true)
        return hex.count == 1 ? "0" + hex : hex
    }.joined(separator: ":")

    @Test func parsesAndPrintsTheSDPForm() throws {
        let fingerprint = try DTLSFingerprint(parsing: DTLSFingerprintTests.text)
        #expect(fingerprint.digest == (0..<32).map { UInt8($0 * 7) })
        #expect("\(fingerprint)" == DTLSFingerprintTests.text)
        #expect(try DTLSFingerprint(parsing: DTLSFingerprintTests.text.lowercased().uppercased()
            .replacingOccurrences(of: "SHA-256", with: "SHA-256")) == fingerprint)
    }

    @Test(arguments: ["", "sha-256", "sha-1 AB:CD", "sha-256 AB:CD", "sha-256 " + String(repeating: "ZZ:", count: 31) + "ZZ",
                      "sha-256 " + String(repeating: "ABC:", count: 31) + "AB", "md5 " + String(repeating: "AB:", count: 15) + "AB"])
    func rejectsWhatIsNotASHA256Fingerprint(text: String) {
        #expect(throws: DTLSFingerprintError.self) { try DTLSFingerprint(parsing: text) }
    }

    @Test func theProcessCertificateIsMadeOnceAndItsFingerprintIsItsDERHash() throws {
        let first = try DTLSCertificate.forProcess()
        let second = try DTLSCertificate.forProcess()
        #expect(first === second)
        #expect(first.fingerprint.digest.count == 32)
    }
}
#endif
