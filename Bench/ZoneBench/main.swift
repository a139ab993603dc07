// zonertc-bench: ZoneRTC's benchmarks. Run in release: `swift run -c release zonertc-bench <suite> [--json]`.
import Foundation
#if PostgreSQL
import PostgresStore
import RecordStore
#endif

let arguments = Array(CommandLine.arguments.dropFirst())
// A load generator rather than a suite: Bench/relay/compare.sh drives it against a running relay.
if arguments.first == "relay-load" { exit(RelayLoad.run(Array(arguments.dropFirst()))) }
let json = arguments.contains("--json")
/// `--postgres URL` for the postgres suite.
let postgresURL = arguments.firstIndex(of: "--postgres")
    .flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
/// `--daemons N[,N…]` for the postgres suite: the daemon counts to measure (default 1, 2 and 4).
let daemonCountsArgument = arguments.firstIndex(of: "--daemons")
    .flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
/// `--group-commit-delay D` and `--group-commit-size N` for the postgres suite (the daemon's defaults otherwise).
let groupCommitDelayArgument = arguments.firstIndex(of: "--group-commit-delay")
    .flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
let groupCommitSizeArgument = arguments.firstIndex(of: "--group-commit-size")
    .flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
let suites = arguments.filter {
    !$0.hasPrefix("--") && ![postgresURL, daemonCountsArgument, groupCommitDelayArgument, groupCommitSizeArgument]
        .contains($0)
}

let usage = """
    usage: zonertc-bench <suite>... [--json] [--quick]
    --quick (or ZONERTC_BENCH_QUICK=1): a smoke run, every duration and count cut down; its figures mean nothing
    suites:
      digests   SHA-1, SHA-256, MD5, CRC-32 throughput; HMAC-SHA1/HMAC-SHA256 of a 100-byte message
      sha       SHA-1/SHA-256 on the SHA extensions vs portable at 64 B, 1 KB, 64 KB (MB/s), HMAC-SHA1 of 100 B
                per second; `openssl speed -evp sha1|sha256` beside them if installed
      store     engine + journal: durable saves/s from 16 writers (fsync batch), zone-change fetch records/s
      http      store daemon on loopback: saves/s from 16 connections (fsync batch), push latency (lan)
      stun      ICE Binding request: encode+integrity+fingerprint and parse+verify, messages/s on one core
      ice       two ICE agents in memory: CPU µs from creation to a nominated host pair, over 2,000 connects
      ice-udp   two ICE transports over loopback UDP: wall ms from creation to both selected, 200 connects
      dtls      (trait WebRTC) DTLS handshake in memory p50/p99; SRTP protect+unprotect of 1,200 B, ns CPU
      postgres  daemons on one PostgreSQL (--postgres URL; build with --traits PostgreSQL): saves/s from 16
                connections over 1, 2 and 4 daemons (--daemons 2 or 1,2,4), CPU µs per save in the daemons and in
                PostgreSQL, push latency across two daemons (lan); --group-commit-delay D (0: off) and
                --group-commit-size N as `zonertc store serve` takes them; Bench/postgres.sh
      all       every suite above but postgres
    zonertc-bench relay-load --server HOST:PORT [--rate N] …   paced ChannelData through a TURN relay: what was lost,
                and send → arrival p50/p99 (RelayLoad.swift)
    """

if suites.isEmpty || arguments.contains("--help") || arguments.contains("-h") {
    print(usage)
    exit(suites.isEmpty && !arguments.contains("--help") ? 2 : 0)
}

if json {
    print("{\"bench\":\"machine\",\"machine\":\"\(BenchRun.machine)\"}")
} else {
    print("machine: \(BenchRun.machine)")
}

for suite in suites {
    switch suite {
    case "digests": DigestBench.run(json: json)
    case "sha": DigestImplementationBench.run(json: json)
    case "store": await StoreBench.run(json: json)
    case "stun": STUNBench.run(json: json)
    case "ice": ICEBench.run(json: json)
    case "ice-udp": ICESocketBench.run(json: json)
    case "http": await HTTPStoreBench.run(json: json)
    case "dtls": DTLSBench.run(json: json)
    case "postgres":
        #if PostgreSQL
        var counts = [1, 2, 4]
        if let given = daemonCountsArgument {
            let parsed = given.split(separator: ",").compactMap { Int($0) }
            guard !parsed.isEmpty, parsed.count == given.split(separator: ",").count,
                  parsed.allSatisfy({ (1...16).contains($0) }) else {
                FileHandle.standardError.write(Data("zonertc-bench: --daemons wants counts 1…16, e.g. 2 or 1,2,4\n".utf8))
                exit(2)
            }
            counts = parsed
        }
        var groupCommit = GroupCommit()
        if let text = groupCommitDelayArgument {
            guard let delay = text == "0" ? .zero : try? PushProfile.parseDuration(text) else {
                FileHandle.standardError.write(Data("zonertc-bench: --group-commit-delay wants e.g. 800us or 0\n".utf8))
                exit(2)
            }
            groupCommit.delay = delay
        }
        if let text = groupCommitSizeArgument {
            guard let size = Int(text), (1...65_536).contains(size) else {
                FileHandle.standardError.write(Data("zonertc-bench: --group-commit-size wants 1…65536\n".utf8))
                exit(2)
            }
            groupCommit.size = size
        }
        await PostgresStoreBench.run(url: postgresURL, daemonCounts: counts, groupCommit: groupCommit, json: json)
        #else
        print("postgres bench: this zonertc-bench was built without PostgreSQL; build with --traits PostgreSQL")
        exit(2)
        #endif
    case "all":
        DigestBench.run(json: json)
        await StoreBench.run(json: json)
        STUNBench.run(json: json)
        ICEBench.run(json: json)
        await HTTPStoreBench.run(json: json)
    default:
        FileHandle.standardError.write(Data("zonertc-bench: unknown suite '\(suite)'\n\(usage)\n".utf8))
        exit(2)
    }
}
