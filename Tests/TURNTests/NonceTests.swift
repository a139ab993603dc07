// The server's nonces (RFC 8489 §9.2; RFC 8656 §7.2 ties them to the 5-tuple): minted as
// "stamp-signature", the stamp the expiry in lower-case hex, the signature 16 lower-case hex digits.
import Testing
@testable import TURN
import ZoneCore

@Suite struct NonceTests {
    let tuple = FiveTuple(client: Endpoint(address: .v4(0xC633_640A), port: 50_000),
                          server: Endpoint(address: .v4(0xCB00_7164), port: 3478))

    func server(lifetime: Duration) -> TURNServer {
        var configuration = TURNServerConfiguration(realm: "r", authentication: .users(["u": "p"]),
                                                    relayAddress: .loopbackV4, nonceKey: [1, 2, 3])
        configuration.nonceLifetime = lifetime
        return TURNServer(configuration: configuration, seed: 1)
    }

    @Test("the stamp prints the expiry as String(radix: 16) does; the nonce is fresh for its 5-tuple only")
    func stampAndSignature() {
        let s = server(lifetime: .seconds(600))
        // Expiries of every hex width, from one digit to many.
        for seconds: Int64 in [-600, -599, -590, 0, 1, 15, 16, 255, 4096, 1_700_000_000, 1 << 33] {
            let now = Instant.seconds(seconds)
            let nonce = s.mintNonce(for: tuple, now: now)
            let expiry = UInt64(max(0, seconds + 600))
            let parts = nonce.split(separator: "-", omittingEmptySubsequences: false)
            #expect(parts.count == 2)
            #expect(parts.first.map(String.init) == String(expiry, radix: 16))
            #expect(parts.last?.count == 16 && parts.last?.allSatisfy { "0123456789abcdef".contains($0) } == true)
            if expiry > 0 {
                #expect(s.nonceIsFresh(nonce, for: tuple, now: now))
            }
            let elsewhere = FiveTuple(client: Endpoint(address: .v4(0xC633_640B), port: 50_000), server: tuple.server)
            #expect(!s.nonceIsFresh(nonce, for: elsewhere, now: now))
        }
    }
}
