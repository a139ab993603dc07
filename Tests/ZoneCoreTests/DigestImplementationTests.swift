import Foundation
import Testing
@testable import ZoneCore

// SHA-1 and SHA-256 on both compression functions — the portable Swift code and the x86 SHA
// extensions (CDigests) — must give the same digests, byte for byte. On a CPU without the
// extensions `.shaExtensions` runs the portable code, so these compare it with itself and pass;
// on one with them (this machine) they compare the two, and the first test fails if the
// extensions are there but not used.

private let both: [DigestImplementation] = [.portable, .shaExtensions]

/// The 896-bit message of the FIPS 180-4 examples (NIST "Examples with Intermediate Values").
private let fourBlock896 = ascii(
    "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu")

/// `fresh` (a hash that has absorbed nothing) fed `m` in the given piece lengths, then finished.
private func digest<H: HashFunction>(_ fresh: H, _ m: [UInt8], pieces: [Int]) -> [UInt8] {
    var h = fresh
    var start = 0
    m.withUnsafeBytes { bytes in
        for length in pieces {
            h.update(UnsafeRawBufferPointer(rebasing: bytes[start..<start + length]))
            start += length
        }
    }
    precondition(start == m.count)
    return h.finalize()
}

/// Piece lengths summing to `n`: mostly short, some long, some empty.
private func randomPieces(_ n: Int, _ rng: inout SeededRandom) -> [Int] {
    var pieces: [Int] = []
    var left = n
    while left > 0 {
        let limit: UInt64 = rng.next() % 4 == 0 ? 300 : 70
        let length = min(left, Int(rng.next() % limit))
        pieces.append(length)
        left -= length
    }
    return pieces
}

private func randomBytes(_ n: Int, _ rng: inout SeededRandom) -> [UInt8] {
    (0..<n).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
}

/// The flags of the first processor in /proc/cpuinfo, or nil where there is no such file.
private func cpuinfoFlags() -> Set<Substring>? {
    guard let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return nil }
    guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("flags") }),
          let colon = line.firstIndex(of: ":") else { return nil }
    return Set(line[line.index(after: colon)...].split(separator: " "))
}

@Test func shaExtensionsAreUsedWhereTheCPUHasThem() throws {
    // The kernel's view, independent of our CPUID check.
    #if arch(x86_64) || arch(i386)
    if let flags = cpuinfoFlags() {
        let kernelSays = flags.contains("sha_ni") && flags.contains("sse4_1") && flags.contains("ssse3")
        #expect(DigestImplementation.cpuHasSHAExtensions == kernelSays,
                "CPUID and /proc/cpuinfo disagree about the SHA extensions")
    }
    #else
    #expect(!DigestImplementation.cpuHasSHAExtensions)
    #endif

    let has = DigestImplementation.cpuHasSHAExtensions
    let accelerated: DigestImplementation = has ? .shaExtensions : .portable
    #expect(SHA1(implementation: .shaExtensions).implementation == accelerated)
    #expect(SHA256(implementation: .shaExtensions).implementation == accelerated)
    #expect(SHA1(implementation: .portable).implementation == .portable)
    #expect(SHA256(implementation: .portable).implementation == .portable)
    // The default path: the extensions unless ZONERTC_PORTABLE_DIGESTS=1 turned them off.
    let expected: DigestImplementation = has && !DigestImplementation.portableForced ? .shaExtensions : .portable
    #expect(DigestImplementation.preferred == expected)
    #expect(SHA1().implementation == expected)
    #expect(SHA256().implementation == expected)
    // Copies (HMAC's prepared states) keep the implementation they were made with.
    let key = ascii("key")
    let mac = key.withUnsafeBytes { HMAC<SHA1>(key: $0, emptyHash: SHA1(implementation: .portable)) }
    #expect(mac.inner.implementation == .portable && mac.outer.implementation == .portable)
    #expect(HMAC<SHA256>(key: key).inner.implementation == expected)
}

@Test(arguments: both)
func sha1FIPSVectorsOnEachImplementation(_ implementation: DigestImplementation) {
    let fresh = SHA1(implementation: implementation)
    func sha1(_ m: [UInt8]) -> String { hex(digest(fresh, m, pieces: [m.count])) }
    #expect(sha1([]) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
    #expect(sha1(abc) == "a9993e364706816aba3e25717850c26c9cd0d89d")
    #expect(sha1(twoBlock448) == "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
    #expect(sha1(fourBlock896) == "a49b2446a02c645bf419f995b67091253a04a259")
    #expect(sha1(millionA) == "34aa973cd4c4daa4f61eeb2bdbad27316534016f")
}

@Test(arguments: both)
func sha256FIPSVectorsOnEachImplementation(_ implementation: DigestImplementation) {
    let fresh = SHA256(implementation: implementation)
    func sha256(_ m: [UInt8]) -> String { hex(digest(fresh, m, pieces: [m.count])) }
    #expect(sha256([]) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    #expect(sha256(abc) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    #expect(sha256(twoBlock448) == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    #expect(sha256(fourBlock896) == "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1")
    #expect(sha256(millionA) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
}

/// Seeded random messages: every length 0…300 and some multi-block runs; the portable digest of
/// the whole message against the accelerated one fed whole, a byte at a time and in random pieces.
private func checkImplementationsAgree<H: HashFunction>(
    portable: H, accelerated: H, seed: UInt64
) {
    var rng = SeededRandom(seed: seed)
    let lengths = Array(0...300) + [1_024, 4_096 + 17, 65_536, 65_536 + 55, 200_003]
    for n in lengths {
        let m = randomBytes(n, &rng)
        let expected = digest(portable, m, pieces: [n])
        #expect(expected.count == H.digestSize)
        let whole = digest(accelerated, m, pieces: [n])
        let pieces = randomPieces(n, &rng)
        let split = digest(accelerated, m, pieces: pieces)
        let portableSplit = digest(portable, m, pieces: pieces)
        let bytewise = n <= 4_096 + 17 ? digest(accelerated, m, pieces: Array(repeating: 1, count: n)) : whole
        if whole != expected || split != expected || portableSplit != expected || bytewise != expected {
            Issue.record("""
                \(H.self) length \(n): portable \(hex(expected)), accelerated whole \(hex(whole)), \
                split \(hex(split)), bytewise \(hex(bytewise)); portable split \(hex(portableSplit))
                """)
            return
        }
    }
}

@Test func sha1ImplementationsAgreeOnRandomMessages() {
    checkImplementationsAgree(portable: SHA1(implementation: .portable),
                              accelerated: SHA1(implementation: .shaExtensions), seed: 0xD16E_5701_0000_0001)
}

@Test func sha256ImplementationsAgreeOnRandomMessages() {
    checkImplementationsAgree(portable: SHA256(implementation: .portable),
                              accelerated: SHA256(implementation: .shaExtensions), seed: 0xD16E_5725_6000_0001)
}

/// The compression functions alone, from random (not just initial) states, over 1–9 blocks read
/// at every offset 0…15 from 16-byte alignment: the state must come back the same from both.
@Test func compressionFunctionsAgreeFromRandomStatesAndOffsets() {
    var rng = SeededRandom(seed: 0xD16E_5C0F_0000_0001)
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 16 + 9 * 64, alignment: 16)
    defer { buffer.deallocate() }
    func word() -> UInt32 { UInt32(truncatingIfNeeded: rng.next()) }
    for trial in 0..<200 {
        for i in 0..<buffer.count { buffer[i] = UInt8(truncatingIfNeeded: rng.next()) }
        let offset = trial % 16
        let blocks = UnsafeRawPointer(buffer.baseAddress! + offset)
        let count = 1 + trial % 9

        let s1 = SHA1.State(h0: word(), h1: word(), h2: word(), h3: word(), h4: word())
        var p1 = s1, a1 = s1
        SHA1.compress(&p1, blocks, count, .portable)
        SHA1.compress(&a1, blocks, count, SHA1(implementation: .shaExtensions).implementation)
        #expect([p1.h0, p1.h1, p1.h2, p1.h3, p1.h4] == [a1.h0, a1.h1, a1.h2, a1.h3, a1.h4], "SHA-1 trial \(trial)")

        let s2 = SHA256.State(h0: word(), h1: word(), h2: word(), h3: word(),
                              h4: word(), h5: word(), h6: word(), h7: word())
        var p2 = s2, a2 = s2
        SHA256.compress(&p2, blocks, count, .portable)
        SHA256.compress(&a2, blocks, count, SHA256(implementation: .shaExtensions).implementation)
        #expect([p2.h0, p2.h1, p2.h2, p2.h3, p2.h4, p2.h5, p2.h6, p2.h7]
                == [a2.h0, a2.h1, a2.h2, a2.h3, a2.h4, a2.h5, a2.h6, a2.h7], "SHA-256 trial \(trial)")
    }
}

/// HMAC (RFC 2202 §3 and RFC 4231 §4.3 test case 2; RFC 2202 test case 6 for a key longer than
/// a block) on each implementation.
@Test(arguments: both)
func hmacVectorsOnEachImplementation(_ implementation: DigestImplementation) {
    func mac<H: HashFunction>(_ empty: H, key: [UInt8], _ message: [UInt8]) -> String {
        key.withUnsafeBytes { hex(HMAC<H>(key: $0, emptyHash: empty).authenticationCode(for: message)) }
    }
    let sha1 = SHA1(implementation: implementation), sha256 = SHA256(implementation: implementation)
    let jefe = ascii("Jefe"), question = ascii("what do ya want for nothing?")
    #expect(mac(sha1, key: jefe, question) == "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79")
    #expect(mac(sha256, key: jefe, question) == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    #expect(mac(sha1, key: repeated(0xAA, 80), ascii("Test Using Larger Than Block-Size Key - Hash Key First"))
            == "aa4ae5e15272d00e95705637ce8a3b55ed402112")
}

// CRC-32 folded by carry-less multiplication (CDigests) against the tables alone: every length
// around the folding's thresholds (16 and 64 bytes, multiples of 16, the 64-byte loop), at every
// alignment of the first byte, continuing from several registers.
@Test func crc32FoldingMatchesTables() throws {
    #if arch(x86_64) || arch(i386)
    if let flags = cpuinfoFlags() {
        #expect(CRC32.cpuHasCarrylessMultiply == (flags.contains("pclmulqdq") && flags.contains("sse4_1")),
                "CPUID and /proc/cpuinfo disagree about PCLMULQDQ")
    }
    #endif
    #expect(CRC32.foldsWithCarrylessMultiply
            == (CRC32.cpuHasCarrylessMultiply && !DigestImplementation.portableForced))
    try #require(CRC32.cpuHasCarrylessMultiply, "this CPU cannot fold: only the tables to test")
    var random = SeededRandom(seed: 32)
    let buffer = (0..<(300 + 16)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
    buffer.withUnsafeBytes { all in
        for offset in 0..<16 {
            for length in 0...300 {
                let bytes = UnsafeRawBufferPointer(rebasing: all[offset..<(offset + length)])
                for initial: UInt32 in [0, 0xFFFF_FFFF, UInt32(truncatingIfNeeded: random.next())] {
                    let folded = CRC32.checksum(bytes, initial: initial, folding: true)
                    let tables = CRC32.checksum(bytes, initial: initial, folding: false)
                    if folded != tables {
                        Issue.record("offset \(offset), length \(length), initial \(initial): \(folded) != \(tables)")
                        return
                    }
                }
            }
        }
    }
    // And the check value through the folding path: "123456789" repeated to 72 bytes, per zlib.
    let repeated = Array(String(repeating: "123456789", count: 8).utf8)
    #expect(repeated.withUnsafeBytes { CRC32.checksum($0, initial: 0, folding: true) } == 0x8811_A440)
}

