// SHA-1 and SHA-256 on each compression function — the x86 SHA extensions (CDigests) and the portable
// Swift code — in one run: MB per CPU second of whole digests (init, update, finalize) of 64-byte, 1 KB
// and 64 KB inputs, and HMAC-SHA1s per CPU second of a 100-byte message (a STUN Binding request with
// MESSAGE-INTEGRITY is about that size), the key's HMAC state reused as a STUN agent does.
// `openssl speed -evp sha1|sha256` at the same sizes is the reference program, run beside ours when
// it is installed.
//
// Every digest is folded into a printed checksum and the input changes by one byte per repetition,
// so no work can be hoisted or dropped.
import Foundation
import ZoneCore

enum DigestImplementationBench {
    /// Aim for about this long per measurement (after a calibration pass).
    static let targetSeconds = 0.4
    static let sizes = [64, 1_024, 65_536]
    /// What `openssl speed` is given per size (it stops itself; `timeout` kills it after 20 s if not).
    static let opensslSeconds = 1

    private struct Row {
        var hash: String
        var size: Int
        var shaExtensions: Double
        var portable: Double
        var openssl: Double?
    }

    static func run(json: Bool) {
        let implementations: [DigestImplementation] = [.shaExtensions, .portable]
        let accelerated = SHA1(implementation: .shaExtensions).implementation == .shaExtensions
        var rng = SeededRandom(seed: 0xD16E_57BE_4C40_0002)
        let data = UnsafeMutableRawBufferPointer.allocate(byteCount: sizes.max()!, alignment: 64)
        defer { data.deallocate() }
        for i in 0..<data.count { data[i] = UInt8(truncatingIfNeeded: rng.next()) }

        var checksum: UInt64 = 0
        func megabytesPerSecond<H: HashFunction>(_ fresh: H, size: Int) -> Double {
            let input = UnsafeRawBufferPointer(rebasing: data[0..<size])
            var round = 0
            let measured = measureCPU { reps in
                for _ in 0..<reps {
                    data[round % size] &+= 1
                    round &+= 1
                    checksum = checksum &* 31 &+ fold(fresh, input)
                }
            }
            return Double(size) * Double(measured.reps) / measured.seconds / 1e6
        }

        var rows: [Row] = []
        for (name, openssl) in [("SHA-1", "sha1"), ("SHA-256", "sha256")] {
            for size in sizes {
                var figures: [Double] = []
                for implementation in implementations {
                    figures.append(name == "SHA-1"
                        ? megabytesPerSecond(SHA1(implementation: implementation), size: size)
                        : megabytesPerSecond(SHA256(implementation: implementation), size: size))
                }
                rows.append(Row(hash: name, size: size, shaExtensions: figures[0], portable: figures[1],
                                openssl: opensslSpeed(openssl, bytes: size)))
            }
        }

        let key = (0..<20).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        var message = (0..<100).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        var macsPerSecond: [Double] = []
        for implementation in implementations {
            let hmac = key.withUnsafeBytes { HMAC<SHA1>(key: $0, emptyHash: SHA1(implementation: implementation)) }
            let measured = measureCPU { reps in
                withUnsafeTemporaryAllocation(byteCount: 20, alignment: 16) { mac in
                    for i in 0..<reps {
                        message[i % 100] &+= 1
                        message.withUnsafeBytes { hmac.authenticationCode(for: $0, into: mac) }
                        checksum = checksum &* 31 &+ mac.loadUnaligned(as: UInt64.self)
                    }
                }
            }
            macsPerSecond.append(Double(measured.reps) / measured.seconds)
        }

        if json {
            func format(_ value: Double) -> String { String(format: "%.1f", value) }
            for r in rows {
                let key = "\(r.hash == "SHA-1" ? "sha1" : "sha256")_\(r.size)B"
                let openssl = r.openssl.map { ",\"openssl_MBps\":\(format($0))" } ?? ""
                print("{\"bench\":\"\(key)\",\"sha_extensions_MBps\":\(format(r.shaExtensions)),"
                      + "\"portable_MBps\":\(format(r.portable))\(openssl)}")
            }
            print("{\"bench\":\"hmac_sha1_100B\",\"sha_extensions_per_s\":\(format(macsPerSecond[0])),"
                  + "\"portable_per_s\":\(format(macsPerSecond[1]))}")
            print("{\"bench\":\"sha_checksum\",\"value\":\"\(String(checksum, radix: 16))\",\"cpu_has_sha_extensions\":"
                  + "\(accelerated)}")
            return
        }
        print("SHA-1 / SHA-256 by compression function (release build expected; MB/s = 10^6 input bytes per "
              + "CPU second, whole digests; openssl speed reports user CPU time too)")
        if !accelerated {
            print("  this CPU has no SHA extensions: the 'SHA extensions' column runs the portable code too")
        }
        let header = ["hash", "input", "SHA extensions", "portable", "ratio", "openssl speed -evp"]
        var table = [header]
        for r in rows {
            table.append([r.hash, r.size >= 1_024 ? "\(r.size / 1_024) KB" : "\(r.size) B",
                          "\(format(r.shaExtensions)) MB/s", "\(format(r.portable)) MB/s",
                          String(format: "%.2f×", r.shaExtensions / r.portable),
                          r.openssl.map { "\(format($0)) MB/s" } ?? "not run"])
        }
        table.append(["HMAC-SHA1", "100 B", "\(format(macsPerSecond[0])) /s", "\(format(macsPerSecond[1])) /s",
                      String(format: "%.2f×", macsPerSecond[0] / macsPerSecond[1]), ""])
        let widths = header.indices.map { column in table.map { $0[column].count }.max() ?? 0 }
        for line in table {
            let cells = line.enumerated().map { column, cell in
                column < 2 ? cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
                    : String(repeating: " ", count: widths[column] - cell.count) + cell
            }
            print("  " + cells.joined(separator: "  "))
        }
        print("  checksum \(String(checksum, radix: 16))")
    }

    /// Repetitions of `body` chosen by `Calibration` (about `targetSeconds` of wall time) and the process
    /// CPU seconds the last, measured pass took: per CPU second, as `openssl speed` reports (user time),
    /// so other engineers' builds on this machine count less.
    private static func measureCPU(_ body: (Int) -> Void) -> (reps: Int, seconds: Double) {
        var cpuSeconds = 0.0
        let measured = Calibration.measure(targetSeconds: targetSeconds) { reps in
            let before = ProcessCPU.selfNanoseconds()
            body(reps)
            cpuSeconds = Double(ProcessCPU.selfNanoseconds() &- before) / 1e9
        }
        return (measured.reps, max(cpuSeconds, 1e-6))
    }

    /// The digest of `input` from a copy of `fresh`, folded to 64 bits.
    @inline(never)
    private static func fold<H: HashFunction>(_ fresh: H, _ input: UnsafeRawBufferPointer) -> UInt64 {
        var h = fresh
        h.update(input)
        return withUnsafeTemporaryAllocation(byteCount: H.digestSize, alignment: 16) { out in
            h.finalize(into: out)
            return out.loadUnaligned(as: UInt64.self)
        }
    }

    /// `openssl speed -mr -seconds N -bytes B -evp ALGORITHM`'s bytes per second (its `+F:` line), in MB/s;
    /// nil if openssl is not installed or printed no figure.
    private static func opensslSpeed(_ algorithm: String, bytes: Int) -> Double? {
        if BenchRun.quick { return nil }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        // Bounded: coreutils' timeout ends an openssl that has not stopped itself within 20 s.
        process.arguments = ["timeout", "20", "openssl", "speed", "-mr", "-seconds", "\(opensslSeconds)",
                             "-bytes", "\(bytes)", "-evp", algorithm]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return nil }
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        // "+F:<index>:<algorithm>:<bytes per second>"
        for line in output.split(separator: "\n") where line.hasPrefix("+F:") {
            if let field = line.split(separator: ":").last, let perSecond = Double(field) { return perSecond / 1e6 }
        }
        return nil
    }

    private static func format(_ value: Double) -> String {
        let rounded = Int(value.rounded())
        var digits = String(rounded)
        var grouped = ""
        while digits.count > 3 {
            grouped = "," + digits.suffix(3) + grouped
            digits.removeLast(3)
        }
        return digits + grouped
    }
}
