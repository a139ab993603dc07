// zonertc-bench: ZoneRTC's benchmarks. Run in release: `swift run -c release zonertc-bench <suite> [--json]`.
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
// A load generator rather than a suite: Bench/relay/compare.sh drives it against a running relay.
if arguments.first == "relay-load" { exit(RelayLoad.run(Array(arguments.dropFirst()))) }
let json = arguments.contains("--json")
let suites = arguments.filter { !$0.hasPrefix("--") }

let usage = """
    usage: zonertc-bench <suite>... [--json]
    suites:
      digests   SHA-1, SHA-256, MD5, CRC-32 throughput; HMAC-SHA1/HMAC-SHA256 of a 100-byte message
      store     engine + journal: durable saves/s from 16 writers (fsync batch), zone-change fetch records/s
      http      store daemon on loopback: saves/s from 16 connections (fsync batch), push latency (lan)
      stun      ICE Binding request: encode+integrity+fingerprint and parse+verify, messages/s on one core
      ice       two ICE agents in memory: CPU µs from creation to a nominated host pair, over 2,000 connects
      ice-udp   two ICE transports over loopback UDP: wall ms from creation to both selected, 200 connects
      dtls      (trait WebRTC) DTLS handshake in memory p50/p99; SRTP protect+unprotect of 1,200 B, ns CPU
      all       every suite above
    zonertc-bench relay-load --server HOST:PORT [--rate N] …   paced ChannelData through a TURN relay (RelayLoad.swift)
    """

if suites.isEmpty || arguments.contains("--help") || arguments.contains("-h") {
    print(usage)
    exit(suites.isEmpty && !arguments.contains("--help") ? 2 : 0)
}

for suite in suites {
    switch suite {
    case "digests": DigestBench.run(json: json)
    case "store": await StoreBench.run(json: json)
    case "stun": STUNBench.run(json: json)
    case "ice": ICEBench.run(json: json)
    case "ice-udp": ICESocketBench.run(json: json)
    case "http": await HTTPStoreBench.run(json: json)
    case "dtls": DTLSBench.run(json: json)
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
