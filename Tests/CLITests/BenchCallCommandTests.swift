import Foundation
import Testing

/// `zonertc bench call` as a user runs it. Its `--media-security` used to default to a description
/// ("`zonertc call`'s") that was passed to every call as the value, so every call failed; it is run here
/// without the option, in whatever build the tests have (dtls-srtp with the WebRTC trait, else none).
@Suite("zonertc bench call")
struct BenchCallCommandTests {
    static let fixture = CallProcessTests.fixtures.appendingPathComponent("vp8-320x240-60.ivf").path

    @Test("without --media-security every call runs with the build's default and the first frame is timed")
    func defaultMediaSecurity() throws {
        let output = try ZonertcProcess.run(["bench", "call", Self.fixture, "--calls", "1", "--json"],
                                            limit: .seconds(90))
        #expect(output.status == 0, "stdout:\n\(output.stdout)\nstderr:\n\(output.stderr)")
        struct Result: Decodable { var calls: Int; var failures: Int; var firstFrameP50Ms: Double? }
        let result = try JSONDecoder().decode(Result.self, from: Data(output.stdout.utf8))
        #expect(result.calls == 1 && result.failures == 0, "\(output.stderr)")
        #expect(result.firstFrameP50Ms != nil)
    }

    @Test("an unknown --media-security is a usage error naming the choices")
    func badMediaSecurity() throws {
        let output = try ZonertcProcess.run(["bench", "call", Self.fixture, "--calls", "1",
                                             "--media-security", "tls"])
        #expect(output.status == 2)
        #expect(output.stderr.contains("choose dtls-srtp or none"), "\(output.stderr)")
    }
}
