// STUN benchmarks: the per-message cost of an ICE connectivity check on one core.
//
// The message is a typical ICE Binding request (RFC 8445 §7.1): USERNAME "abcd:efgh", PRIORITY,
// ICE-CONTROLLING, USE-CANDIDATE, then MESSAGE-INTEGRITY under a short-term key and FINGERPRINT
// (92 bytes on the wire). Measured:
//   - encode: build the bytes with a fresh transaction ID, HMAC-SHA1 and CRC-32 included;
//   - parse + verify: decode every attribute, check FINGERPRINT, check MESSAGE-INTEGRITY —
//     what an agent does with each check it receives;
//   - and the two halves of the latter, decode alone and verify alone (scan + HMAC).
// The key's HMAC state is built once, as an agent keeps it per remote password. Every result is
// folded into a printed checksum so no work can be dropped.
import Foundation
import STUN
import ZoneCore

enum STUNBench {
    /// Aim for about this long per measurement (after a calibration pass).
    static let targetSeconds = 0.75

    private struct Result {
        var name: String
        var label: String
        var perSecond: Double
    }

    static func run(json: Bool) {
        var random = SeededRandom(seed: 0x5754_4E42_454E_4348)
        let key: STUNIntegrityKey
        do {
            key = try STUNIntegrityKey.shortTerm(password: "Zq4sT8nB1vW0xY6cK3rJ2h")
        } catch {
            fatalError("STUN bench: \(error)")
        }
        var request = STUNMessage(
            method: .binding, messageClass: .request, transactionID: .random(using: &random),
            attributes: [
                .username("abcd:efgh"), .priority(0x6E00_01FF), .iceControlling(tieBreaker: random.next()),
                .useCandidate,
            ])

        // A ring of distinct encoded requests for the receive side.
        let ring: [[UInt8]] = (0..<256).map { _ in
            request.transactionID = .random(using: &random)
            return try! request.encode(key: key, fingerprint: true)
        }
        let messageSize = ring[0].count

        var checksum: UInt64 = 0
        var results: [Result] = []
        func perMessage(_ name: String, _ label: String, _ body: (Int) throws(STUNError) -> UInt64) {
            let measured = measure { reps in
                for i in 0..<reps {
                    do throws(STUNError) {
                        checksum = checksum &* 31 &+ (try body(i))
                    } catch {
                        fatalError("STUN bench \(name): \(error)")
                    }
                }
            }
            results.append(Result(name: name, label: label, perSecond: Double(measured.reps) / measured.seconds))
        }

        perMessage("stun_encode_ice_binding", "encode + MESSAGE-INTEGRITY + FINGERPRINT") { (i) throws(STUNError) in
            request.transactionID = STUNTransactionID(high: UInt32(truncatingIfNeeded: i), low: random.next())
            let bytes = try request.encode(key: key, fingerprint: true)
            return UInt64(bytes[bytes.count - 1]) &+ UInt64(bytes.count)
        }
        perMessage("stun_parse_verify_ice_binding", "parse + verify (FINGERPRINT, MESSAGE-INTEGRITY)") {
            (i) throws(STUNError) in
            let bytes = ring[i & 255]
            let message = try STUNMessage(decoding: bytes)
            try STUNIntegrity.verify(bytes, key: key)
            return message.transactionID.low &+ UInt64(message.attributes.count)
        }
        perMessage("stun_parse_ice_binding", "parse only (with FINGERPRINT)") { (i) throws(STUNError) in
            let message = try STUNMessage(decoding: ring[i & 255])
            return message.transactionID.low &+ UInt64(message.attributes.count)
        }
        perMessage("stun_verify_ice_binding", "verify MESSAGE-INTEGRITY only") { (i) throws(STUNError) in
            UInt64(try STUNIntegrity.verify(ring[i & 255], key: key).rawValue) &+ UInt64(i & 1)
        }

        if json {
            for r in results {
                print("{\"bench\":\"\(r.name)\",\"messages_per_s\":\(String(format: "%.0f", r.perSecond)),"
                    + "\"ns_per_message\":\(String(format: "%.1f", 1e9 / r.perSecond))}")
            }
            print("{\"bench\":\"stun_checksum\",\"value\":\"\(String(checksum, radix: 16))\"}")
        } else {
            print("stun (release build expected; one core; ICE Binding request of \(messageSize) bytes)")
            let width = results.map(\.label.count).max() ?? 0
            for r in results {
                let label = r.label.padding(toLength: width, withPad: " ", startingAt: 0)
                let rate = String(format: "%.0f", r.perSecond)
                let ns = String(format: "%.0f", 1e9 / r.perSecond)
                print("  \(label)  \(String(repeating: " ", count: max(0, 10 - rate.count)))\(rate) msg/s  (\(ns) ns)")
            }
            print("  checksum \(String(checksum, radix: 16))")
        }
    }

    private static func measure(_ body: (Int) -> Void) -> (reps: Int, seconds: Double) {
        Calibration.measure(targetSeconds: targetSeconds, body)
    }
}
