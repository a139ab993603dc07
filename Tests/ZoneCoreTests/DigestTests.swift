import Testing
@testable import ZoneCore

// Known-answer vectors from the standards (FIPS 180-4 examples, RFC 1321 §A.5, RFC 2202 §3,
// RFC 4231 §4), plus cross-checks of every length 0…200 against digests produced by an independent
// implementation (Python's hashlib/hmac/zlib), folded into one FNV-1a value per algorithm.

// MARK: Helpers

func hex(_ bytes: some Sequence<UInt8>) -> String { Hex.encode(bytes) }

private func bytes(hex: String) -> [UInt8] { Hex.decode(hex.utf8)! }

func ascii(_ s: String) -> [UInt8] { Array(s.utf8) }

func repeated(_ byte: UInt8, _ count: Int) -> [UInt8] { [UInt8](repeating: byte, count: count) }

/// The test message of length n used for the cross-checks: byte i is (167·i + 13·n + 7) mod 256.
private func message(_ n: Int) -> [UInt8] {
    (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 167 &+ n &* 13 &+ 7) }
}

/// The test key of length k: byte i is (59·i + 3·k + 1) mod 256.
private func key(_ k: Int) -> [UInt8] {
    (0..<k).map { UInt8(truncatingIfNeeded: $0 &* 59 &+ k &* 3 &+ 1) }
}

/// 64-bit FNV-1a, an independent (non-cryptographic) fold for comparing many digests at once.
private func fnv1a(_ data: [UInt8]) -> UInt64 {
    var h: UInt64 = 0xCBF2_9CE4_8422_2325
    for b in data {
        h ^= UInt64(b)
        h = h &* 0x0000_0100_0000_01B3
    }
    return h
}

/// A `Collection` without contiguous storage, to exercise the copying path of `update`.
private func nonContiguous(_ bytes: [UInt8]) -> LazyMapCollection<Range<Int>, UInt8> {
    (0..<bytes.count).lazy.map { bytes[$0] }
}

let abc = ascii("abc")
let twoBlock448 = ascii("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
let millionA = repeated(UInt8(ascii: "a"), 1_000_000)

// MARK: SHA-1 (FIPS 180-4; example values from NIST's "Examples with Intermediate Values")

@Test func sha1FIPSVectors() {
    #expect(hex(SHA1.hash(abc)) == "a9993e364706816aba3e25717850c26c9cd0d89d")
    #expect(hex(SHA1.hash(twoBlock448)) == "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
    #expect(hex(SHA1.hash(millionA)) == "34aa973cd4c4daa4f61eeb2bdbad27316534016f")
    #expect(hex(SHA1.hash([UInt8]())) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
}

// MARK: SHA-256 (FIPS 180-4)

@Test func sha256FIPSVectors() {
    #expect(hex(SHA256.hash(abc)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    #expect(hex(SHA256.hash(twoBlock448)) == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    #expect(hex(SHA256.hash(millionA)) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    #expect(hex(SHA256.hash([UInt8]())) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
}

// MARK: MD5 (RFC 1321 §A.5, the test suite)

@Test func md5RFC1321Suite() {
    let suite: [(String, String)] = [
        ("", "d41d8cd98f00b204e9800998ecf8427e"),
        ("a", "0cc175b9c0f1b6a831c399e269772661"),
        ("abc", "900150983cd24fb0d6963f7d28e17f72"),
        ("message digest", "f96b697d7cb7938d525a2f31aaf161d0"),
        ("abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"),
        ("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", "d174ab98d277d9f5a5611c2c9f419d9f"),
        ("12345678901234567890123456789012345678901234567890123456789012345678901234567890",
         "57edf4a22be3c955ac49da2e2107b67a"),
    ]
    for (input, digest) in suite {
        #expect(hex(MD5.hash(ascii(input))) == digest, "MD5(\"\(input)\")")
    }
}

// MARK: HMAC-SHA1 (RFC 2202 §3, test cases 1–7)

@Test func hmacSHA1RFC2202() {
    let cases: [(key: [UInt8], data: [UInt8], mac: String)] = [
        (repeated(0x0B, 20), ascii("Hi There"), "b617318655057264e28bc0b6fb378c8ef146be00"),
        (ascii("Jefe"), ascii("what do ya want for nothing?"), "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79"),
        (repeated(0xAA, 20), repeated(0xDD, 50), "125d7342b9ac11cd91a39af48aa17b4f63f175d3"),
        (bytes(hex: "0102030405060708090a0b0c0d0e0f10111213141516171819"), repeated(0xCD, 50),
         "4c9007f4026250c6bc8414f9bf50c86c2d7235da"),
        (repeated(0x0C, 20), ascii("Test With Truncation"), "4c1a03424b55e07fe7f27be1d58bb9324a9a5a04"),
        (repeated(0xAA, 80), ascii("Test Using Larger Than Block-Size Key - Hash Key First"),
         "aa4ae5e15272d00e95705637ce8a3b55ed402112"),
        (repeated(0xAA, 80), ascii("Test Using Larger Than Block-Size Key and Larger Than One Block-Size Data"),
         "e8e99d0f45237d786d6bbaa7965c7808bbff1a91"),
    ]
    for (number, c) in zip(1..., cases) {
        #expect(hex(HMAC<SHA1>.authenticationCode(for: c.data, key: c.key)) == c.mac, "RFC 2202 case \(number)")
        #expect(hex(HMAC<SHA1>(key: c.key).authenticationCode(for: c.data)) == c.mac, "RFC 2202 case \(number)")
    }
    // Case 5 also lists the MAC truncated to 96 bits.
    let truncated = HMAC<SHA1>.authenticationCode(for: ascii("Test With Truncation"), key: repeated(0x0C, 20)).prefix(12)
    #expect(hex(truncated) == "4c1a03424b55e07fe7f27be1")
}

// MARK: HMAC-SHA256 (RFC 4231 §4.2–4.8, test cases 1–7)

@Test func hmacSHA256RFC4231() {
    let cases: [(key: [UInt8], data: [UInt8], mac: String)] = [
        (repeated(0x0B, 20), ascii("Hi There"), "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
        (ascii("Jefe"), ascii("what do ya want for nothing?"),
         "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
        (repeated(0xAA, 20), repeated(0xDD, 50), "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"),
        (bytes(hex: "0102030405060708090a0b0c0d0e0f10111213141516171819"), repeated(0xCD, 50),
         "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"),
        // Case 5: the RFC gives only the first 128 bits.
        (repeated(0x0C, 20), ascii("Test With Truncation"), "a3b6167473100ee06e0c796c2955552b"),
        (repeated(0xAA, 131), ascii("Test Using Larger Than Block-Size Key - Hash Key First"),
         "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
        (repeated(0xAA, 131),
         ascii("This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm."),
         "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"),
    ]
    for (number, c) in zip(1..., cases) {
        let mac = HMAC<SHA256>.authenticationCode(for: c.data, key: c.key)
        #expect(mac.count == 32)
        #expect(hex(mac.prefix(c.mac.utf8.count / 2)) == c.mac, "RFC 4231 case \(number)")
    }
}

// MARK: CRC-32

@Test func crc32CheckValues() {
    #expect(CRC32.checksum(ascii("123456789")) == 0xCBF4_3926)
    #expect(CRC32.checksum([UInt8]()) == 0)
    #expect(CRC32.checksum([UInt8](), initial: 0xDEAD_BEEF) == 0xDEAD_BEEF)
    #expect(CRC32().value == 0)
    #expect(CRC32.checksum(ascii("The quick brown fox jumps over the lazy dog")) == 0x414F_A339)
    var crc = CRC32()
    crc.update(ascii("1234"))
    crc.update(ascii("56789"))
    #expect(crc.value == 0xCBF4_3926)
    #expect(CRC32.checksum(ascii("56789"), initial: CRC32.checksum(ascii("1234"))) == 0xCBF4_3926)
}

/// STUN (RFC 5389 §15.4–15.5) with RFC 5769 §2.1's sample request: FINGERPRINT is the CRC-32 of
/// the 100 bytes before it XORed with 0x5354554E; MESSAGE-INTEGRITY is the HMAC-SHA1, keyed with the
/// short-term password, of the 76 bytes before it with the header length set to end at it (0x50).
@Test func stunSampleRequest() {
    let request = bytes(hex:
        "000100582112a442b7e7a701bc34d686fa87dfae802200105354554e207465737420636c69656e74"
        + "002400046e0001ff80290008932ff9b151263b36000600096576746a3a68367659202020"
        + "000800149aeaa70cbfd8cb56781ef2b5b2d3f249c1b571a2")
    #expect(request.count == 100)
    #expect(CRC32.checksum(request) ^ 0x5354_554E == 0xE57A_3BCF)

    var signed = Array(request[..<76])
    signed[2] = 0x00
    signed[3] = 0x50
    let integrity = HMAC<SHA1>(key: ascii("VOkJxbRl1RmTxUk/WvJxBt"))
    #expect(integrity.authenticationCode(for: signed) == Array(request[80..<100]))
}

// MARK: Cross-checks against an independent implementation, every length 0…200

@Test func everyLengthMatchesReference() {
    var sha1 = [UInt8](), sha256 = [UInt8](), md5 = [UInt8](), crc = [UInt8]()
    for n in 0...200 {
        let m = message(n)
        sha1 += SHA1.hash(m)
        sha256 += SHA256.hash(m)
        md5 += MD5.hash(m)
        withUnsafeBytes(of: CRC32.checksum(m).littleEndian) { crc += $0 }
    }
    // Expected values: FNV-1a over Python's hashlib.sha1/sha256/md5(message(n)).digest() and
    // zlib.crc32(message(n)) (4 bytes little-endian), concatenated for n = 0…200.
    #expect(fnv1a(sha1) == 0x84A2_8289_1C3C_FBFA)
    #expect(fnv1a(sha256) == 0xE038_6613_16C9_F65E)
    #expect(fnv1a(md5) == 0xA175_EEE0_8D7B_4D6B)
    #expect(fnv1a(crc) == 0x85EE_EC5D_C3CA_4477)
}

@Test func hmacEveryKeyLengthMatchesReference() {
    var sha1 = [UInt8](), sha256 = [UInt8]()
    for k in 0...200 {
        sha1 += HMAC<SHA1>(key: key(k)).authenticationCode(for: message(k))
        sha256 += HMAC<SHA256>(key: key(k)).authenticationCode(for: message(k))
    }
    // Expected: FNV-1a over Python's hmac.new(key(k), message(k), "sha1"/"sha256").digest(), k = 0…200.
    #expect(fnv1a(sha1) == 0x4E06_456B_1CF8_236F)
    #expect(fnv1a(sha256) == 0xB8CA_FE74_601E_B7CA)
}

// MARK: Incremental updates

/// Feeds `m` to a fresh `H` in the given piece lengths and returns the digest.
private func digest<H: HashFunction>(_: H.Type, _ m: [UInt8], pieces: [Int]) -> [UInt8] {
    var h = H()
    var start = 0
    for length in pieces {
        m[start..<start + length].withUnsafeBytes { h.update($0) }
        start += length
    }
    precondition(start == m.count)
    return h.finalize()
}

private func crc(_ m: [UInt8], pieces: [Int]) -> UInt32 {
    var c = CRC32()
    var start = 0
    for length in pieces {
        c.update(m[start..<start + length])
        start += length
    }
    return c.value
}

/// Every length 0…200, every two-piece split, and byte-at-a-time, against the one-shot digest.
private func checkEverySplit<H: HashFunction>(_ type: H.Type) {
    for n in 0...200 {
        let m = message(n)
        let oneShot = H.hash(m)
        #expect(oneShot.count == H.digestSize)
        for cut in 0...n {
            let split = digest(type, m, pieces: [cut, n - cut])
            if split != oneShot {
                Issue.record("\(H.self) length \(n) split at \(cut): \(hex(split)) != \(hex(oneShot))")
                return
            }
        }
        #expect(digest(type, m, pieces: Array(repeating: 1, count: n)) == oneShot, "\(H.self) length \(n) bytewise")
        #expect(digest(type, m, pieces: [0, n, 0, 0]) == oneShot, "\(H.self) length \(n) with empty updates")
    }
}

@Test func sha1EverySplit() { checkEverySplit(SHA1.self) }
@Test func sha256EverySplit() { checkEverySplit(SHA256.self) }
@Test func md5EverySplit() { checkEverySplit(MD5.self) }

@Test func crc32EverySplit() {
    for n in 0...200 {
        let m = message(n)
        let oneShot = CRC32.checksum(m)
        for cut in 0...n where crc(m, pieces: [cut, n - cut]) != oneShot {
            Issue.record("CRC-32 length \(n) split at \(cut)")
            return
        }
        #expect(crc(m, pieces: Array(repeating: 1, count: n)) == oneShot, "CRC-32 length \(n) bytewise")
    }
}

/// Random splits of longer messages (up to a few thousand bytes), from a fixed seed.
@Test func randomSplitsMatchOneShot() {
    var rng = SeededRandom(seed: 0x5EED_D16E_5700_0001)
    for trial in 0..<60 {
        let n = Int(rng.next() % 4_000)
        let m = (0..<n).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        var pieces: [Int] = []
        var left = n
        while left > 0 {
            // Mostly small pieces, sometimes large ones, sometimes empty ones.
            let limit = rng.next() % 4 == 0 ? 300 : 70
            let length = min(left, Int(rng.next() % UInt64(limit)))
            pieces.append(length)
            left -= length
        }
        #expect(digest(SHA1.self, m, pieces: pieces) == SHA1.hash(m), "trial \(trial)")
        #expect(digest(SHA256.self, m, pieces: pieces) == SHA256.hash(m), "trial \(trial)")
        #expect(digest(MD5.self, m, pieces: pieces) == MD5.hash(m), "trial \(trial)")
        #expect(crc(m, pieces: pieces) == CRC32.checksum(m), "trial \(trial)")
    }
}

@Test func nonContiguousCollectionsMatchArrays() {
    for n in [0, 1, 63, 64, 255, 256, 257, 1_000] {
        let m = message(n)
        var h1 = SHA1(), h2 = SHA256(), h3 = MD5()
        h1.update(nonContiguous(m))
        h2.update(nonContiguous(m))
        h3.update(nonContiguous(m))
        #expect(h1.finalize() == SHA1.hash(m))
        #expect(h2.finalize() == SHA256.hash(m))
        #expect(h3.finalize() == MD5.hash(m))
        #expect(CRC32.checksum(nonContiguous(m)) == CRC32.checksum(m))
        #expect(SHA1.hash(m[...]) == SHA1.hash(m))  // ArraySlice
        let k = key(n % 150)
        #expect(HMAC<SHA1>(key: nonContiguous(k)).authenticationCode(for: nonContiguous(m))
                == HMAC<SHA1>(key: k).authenticationCode(for: m))
    }
}

@Test func finalizeLeavesStateUsable() {
    let m = message(150)
    var h = SHA256()
    h.update(m[..<70])
    let first = h.finalize()
    #expect(h.finalize() == first)
    #expect(first == SHA256.hash(m[..<70]))
    h.update(m[70...])
    #expect(h.finalize() == SHA256.hash(m))
}

// MARK: HMAC with a reused key

@Test func hmacReusedKeyAndRawBuffers() {
    let mac = HMAC<SHA1>(key: ascii("Jefe"))
    let data = ascii("what do ya want for nothing?")
    let expected = "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79"
    // Repeated and interleaved use must not disturb the precomputed states.
    for n in [0, 100, 500] {
        #expect(mac.authenticationCode(for: message(n)) == HMAC<SHA1>.authenticationCode(for: message(n), key: ascii("Jefe")))
        #expect(hex(mac.authenticationCode(for: data)) == expected)
    }
    // Raw buffers, with the MAC written in place (as into a STUN MESSAGE-INTEGRITY attribute).
    var out = [UInt8](repeating: 0xEE, count: 24)
    data.withUnsafeBytes { message in
        #expect(hex(mac.authenticationCode(for: message)) == expected)
        out.withUnsafeMutableBytes { mac.authenticationCode(for: message, into: $0) }
    }
    #expect(hex(out.prefix(20)) == expected)
    #expect(out.suffix(4) == [0xEE, 0xEE, 0xEE, 0xEE])
    #expect(HMAC<SHA1>.macSize == 20 && HMAC<SHA256>.macSize == 32)
    // An empty key and an empty message are fine.
    #expect(hex(HMAC<SHA256>.authenticationCode(for: [UInt8](), key: [UInt8]()))
            == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
}
