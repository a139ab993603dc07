#if WebRTC
@testable import DTLS
import Testing
import ZoneCore

/// The record walk of `ProtectedRecordScreen`, without OpenSSL.
@Suite struct ProtectedRecordScreenTests {
    static func record(epoch: UInt16, length: Int, declared: Int? = nil) -> [UInt8] {
        let stated = declared ?? length
        return [23, 0xFE, 0xFD, UInt8(epoch >> 8), UInt8(epoch & 0xFF), 0, 0, 0, 0, 0, 1,
                UInt8(stated >> 8), UInt8(stated & 0xFF)] + [UInt8](repeating: 7, count: length)
    }

    @Test func protectedRecordsShorterThanTheCipherAllowsAreRefused() {
        let screen = ProtectedRecordScreen(minimumFragment: 24)
        #expect(screen.admits(Self.record(epoch: 1, length: 24)))
        #expect(screen.admits(Self.record(epoch: 1, length: 1_000)))
        #expect(!screen.admits(Self.record(epoch: 1, length: 23)))
        #expect(!screen.admits(Self.record(epoch: 0x0100, length: 0)))
        // Epoch 0 is not protected: any length is OpenSSL's to judge.
        #expect(screen.admits(Self.record(epoch: 0, length: 1)))
        // Every record of the datagram counts: a short one behind a good one refuses the datagram.
        #expect(!screen.admits(Self.record(epoch: 1, length: 30) + Self.record(epoch: 1, length: 5)))
        #expect(screen.admits(Self.record(epoch: 0, length: 3) + Self.record(epoch: 1, length: 24)))
    }

    /// OpenSSL drops a header whose version it refuses (or whose length it cannot read) alone, and
    /// reads the next header 13 bytes on: a short record hidden there must be found.
    @Test func shortRecordsBehindAHeaderOpenSSLDropsAloneAreRefused() {
        let screen = ProtectedRecordScreen(minimumFragment: 24)
        let short = Self.record(epoch: 1, length: 8)
        func header(version: (UInt8, UInt8), epoch: UInt16 = 1, declared: Int) -> [UInt8] {
            [23, version.0, version.1, UInt8(epoch >> 8), UInt8(epoch & 0xFF), 0, 0, 0, 0, 0, 1,
             UInt8(declared >> 8), UInt8(declared & 0xFF)]
        }
        // Not a DTLS version, stating a length past the end (the fuzzer's case) or within it.
        #expect(!screen.admits(header(version: (0x00, 0x19), declared: 254) + short))
        #expect(!screen.admits(header(version: (0x00, 0x19), declared: short.count) + short))
        // DTLS 1.0's version: dropped alone once connected, read whole before the first packet.
        #expect(!screen.admits(header(version: (0xFE, 0xFF), epoch: 0, declared: short.count) + short))
        // DTLS 1.2 with a length OpenSSL will not read (longer than any record may be).
        #expect(!screen.admits(header(version: (0xFE, 0xFD), declared: 0xFFFF) + short))
        // Headers dropped one after another, the short record third.
        #expect(!screen.admits(header(version: (3, 3), declared: 9) + header(version: (0, 0), declared: 9) + short))
        // The datagram the fuzzer found, as it came.
        let found: [UInt8] = [0x17, 0x00, 0x19, 0xFD, 0x01, 0x08, 0x00, 0x19, 0x80, 0x21, 0xFD, 0x00, 0xFE,
                              0x01, 0xFE, 0xFD, 0x00, 0x01, 0x00, 0x00, 0xFE, 0x00, 0x00, 0x16, 0x00, 0x08,
                              0x00, 0x02, 0x00, 0x08, 0x00, 0xC9, 0x23, 0x01, 0x00, 0x00]
        #expect(!screen.admits(found))
        // What is not a short protected record under either reading still passes: a refused
        // header before a long enough record, and DTLS 1.2 records stepped over by their lengths
        // even when their fragments look like short records.
        #expect(screen.admits(header(version: (0x00, 0x19), declared: 254) + Self.record(epoch: 1, length: 24)))
        #expect(screen.admits(Self.record(epoch: 1, length: 24) + Self.record(epoch: 2, length: 40)))
        let hiding = [23, 0xFE, 0xFD, 0, 1, 0, 0, 0, 0, 0, 1, 0, UInt8(short.count + 16)] + short
            + [UInt8](repeating: 0, count: 16)
        #expect(screen.admits(hiding))
    }

    /// Seeded random datagrams, every prefix: the walk never traps, and refuses a datagram only
    /// when a reading meets a short protected record (checked against a reading by lengths alone).
    @Test func randomDatagramsNeitherTrapNorRefuseAWellFormedRun() {
        let screen = ProtectedRecordScreen(minimumFragment: 24)
        var random = SeededRandom(seed: 12)
        for _ in 0..<2_000 {
            let size = Int(random.next() % 120)
            let bytes = (0..<size).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            for cut in 0...bytes.count { _ = screen.admits(Array(bytes.prefix(cut))) }
            // Well-formed runs of DTLS 1.2 records with fragments of 24 bytes or more always pass.
            var run: [UInt8] = []
            for _ in 0..<(1 + Int(random.next() % 4)) {
                let length = 24 + Int(random.next() % 60)
                run += [23, 0xFE, 0xFD, 0, 1, 0, 0, 0, 0, 0, 1, 0, UInt8(length)]
                    + (0..<length).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            }
            #expect(screen.admits(run))
        }
    }

    @Test func cutOrEmptyInputNeitherTrapsNorLoops() {
        let screen = ProtectedRecordScreen(minimumFragment: 24)
        #expect(screen.admits([]))
        #expect(screen.admits(Array(Self.record(epoch: 1, length: 5).prefix(12))))  // no whole header
        // A length that runs past the end is left to OpenSSL (it discards the rest).
        #expect(screen.admits(Self.record(epoch: 1, length: 30, declared: 0xFFFF)))
        // Before a cipher is known nothing is refused.
        #expect(ProtectedRecordScreen().admits(Self.record(epoch: 1, length: 1)))
    }
}
#endif
