#if WebRTC
@testable import DTLS
import Testing

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
