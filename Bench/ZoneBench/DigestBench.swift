// Digest benchmarks: SHA-1, SHA-256, MD5 and CRC-32 throughput over a 1 MiB buffer, and the cost of
// one HMAC-SHA1 / HMAC-SHA256 of a 100-byte message (the size of a typical STUN binding request),
// with the key's HMAC state reused (as a STUN agent does) and, for reference, rebuilt every time.
//
// Every result is folded into a checksum that is printed, and the input changes by one byte per
// repetition, so no work can be hoisted or dropped.
import Foundation
import ZoneCore

enum DigestBench {
    /// Aim for about this long per measurement (after a calibration pass).
    static let targetSeconds = 0.75

    private struct Result {
        var name: String
        var label: String
        var value: Double
        var unit: String  // "MBps" or "ns"
    }

    static func run(json: Bool) {
        let size = 1 << 20
        var rng = SeededRandom(seed: 0xD16E_57BE_4C40_0001)
        let data = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 64)
        defer { data.deallocate() }
        for i in 0..<size { data[i] = UInt8(truncatingIfNeeded: rng.next()) }
        let input = UnsafeRawBufferPointer(data)

        var checksum: UInt64 = 0
        var results: [Result] = []

        func throughput(_ name: String, _ label: String, _ body: (UnsafeRawBufferPointer) -> UInt64) {
            var round = 0
            let measured = measure { reps in
                for _ in 0..<reps {
                    data[round % size] &+= 1
                    round &+= 1
                    checksum = checksum &* 31 &+ body(input)
                }
            }
            let mbps = Double(size) * Double(measured.reps) / measured.seconds / 1e6
            results.append(Result(name: name, label: label, value: mbps, unit: "MBps"))
        }

        throughput("sha1", "SHA-1") { fold(SHA1.self, $0) }
        throughput("sha256", "SHA-256") { fold(SHA256.self, $0) }
        throughput("md5", "MD5") { fold(MD5.self, $0) }
        throughput("crc32", "CRC-32") { UInt64(CRC32.checksum($0)) }

        let key = (0..<20).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        var message = (0..<100).map { _ in UInt8(truncatingIfNeeded: rng.next()) }

        func perCall(_ name: String, _ label: String, _ body: (inout [UInt8], Int) -> UInt64) {
            let measured = measure { reps in
                for i in 0..<reps {
                    message[i % 100] &+= 1
                    checksum = checksum &* 31 &+ body(&message, i)
                }
            }
            results.append(Result(name: name, label: label, value: measured.seconds * 1e9 / Double(measured.reps), unit: "ns"))
        }

        let sha1Key = HMAC<SHA1>(key: key)
        let sha256Key = HMAC<SHA256>(key: key)
        perCall("hmac_sha1_100B", "HMAC-SHA1, 100 B, key reused") { m, _ in
            first8(sha1Key.authenticationCode(for: m))
        }
        perCall("hmac_sha1_100B_into", "HMAC-SHA1, 100 B, key reused, into buffer") { m, _ in
            macInto(sha1Key, m)
        }
        perCall("hmac_sha1_100B_newkey", "HMAC-SHA1, 100 B, new key each time") { m, i in
            var k = key
            k[0] = UInt8(truncatingIfNeeded: i)
            return first8(HMAC<SHA1>.authenticationCode(for: m, key: k))
        }
        perCall("hmac_sha256_100B", "HMAC-SHA256, 100 B, key reused") { m, _ in
            first8(sha256Key.authenticationCode(for: m))
        }
        perCall("hmac_sha256_100B_into", "HMAC-SHA256, 100 B, key reused, into buffer") { m, _ in
            macInto(sha256Key, m)
        }
        perCall("hmac_sha256_100B_newkey", "HMAC-SHA256, 100 B, new key each time") { m, i in
            var k = key
            k[0] = UInt8(truncatingIfNeeded: i)
            return first8(HMAC<SHA256>.authenticationCode(for: m, key: k))
        }

        if json {
            for r in results {
                print("{\"bench\":\"\(r.name)\",\"\(r.unit)\":\(format(r.value, 1))}")
            }
            print("{\"bench\":\"digests_checksum\",\"value\":\"\(Hex.string(checksum, digits: 16))\"}")
        } else {
            print("digests (release build expected; MB/s = 10^6 bytes/s over a 1 MiB buffer)")
            let width = results.map(\.label.count).max() ?? 0
            for r in results {
                let label = r.label.padding(toLength: width, withPad: " ", startingAt: 0)
                let value = r.unit == "MBps" ? "\(format(r.value, 1)) MB/s" : "\(format(r.value, 1)) ns/op"
                print("  \(label)  \(String(repeating: " ", count: max(0, 14 - value.count)))\(value)")
            }
            print("  checksum \(Hex.string(checksum, digits: 16))")
        }
    }

    private static func measure(_ body: (Int) -> Void) -> (reps: Int, seconds: Double) {
        Calibration.measure(targetSeconds: targetSeconds, body)
    }

    @inline(never)
    private static func fold<H: HashFunction>(_: H.Type, _ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var h = H()
        h.update(bytes)
        return first8(h.finalize())
    }

    @inline(never)
    private static func macInto<H: HashFunction>(_ key: HMAC<H>, _ message: [UInt8]) -> UInt64 {
        withUnsafeTemporaryAllocation(byteCount: H.digestSize, alignment: 16) { out in
            message.withUnsafeBytes { key.authenticationCode(for: $0, into: out) }
            return out.loadUnaligned(as: UInt64.self)
        }
    }

    private static func first8(_ digest: [UInt8]) -> UInt64 {
        digest.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
    }

    private static func format(_ value: Double, _ decimals: Int) -> String {
        String(format: "%.\(decimals)f", value)
    }
}
