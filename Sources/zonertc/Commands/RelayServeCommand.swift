import Foundation
import Relay
import TURN
import ZoneCore

/// `zonertc relay serve`: the TURN relay daemon.
enum RelayServeCommand {
    static let spec = CommandSpec(
        path: ["relay", "serve"],
        summary: "Run a TURN relay (RFC 8656/5766 over UDP) and STUN Binding server.",
        options: [
            .value("--listen", "HOST:PORT", "address for clients", default: "127.0.0.1:3478"),
            .value("--relay-ip", "IP", "address relayed ports are allocated on (default: the --listen address)"),
            .value("--realm", "REALM", "realm of the long-term credentials", default: "zonertc"),
            .value("--user", "USER:PASSWORD", "a user (repeat for more)", repeatable: true),
            .value("--auth-secret", "SECRET", "TURN REST API shared secret (username expiry:user)"),
            .value("--min-port", "N", "lowest relayed port", default: "49152"),
            .value("--max-port", "N", "highest relayed port", default: "65535"),
            .value("--threads", "N", "event-loop threads sharing the port (SO_REUSEPORT)", default: "1"),
            .flag("--allow-loopback-peers", "allow relaying to loopback peers (as coturn's flag)"),
            .flag("--no-gso", "send relayed datagrams one by one, not as UDP_SEGMENT runs"),
            .value("--batch-wait", "DURATION", "when a read finds more than one datagram waiting, rest this long "
                   + "before reading again, so batches are fuller (fewer system calls per datagram; at most this "
                   + "much delay, only while busy; 0 turns it off, at most 10ms)", default: "100us"),
            .value("--allow", "CIDR", "peer addresses to allow even if private (repeatable)", repeatable: true),
            .value("--deny", "CIDR", "peer addresses to refuse (repeatable)", repeatable: true),
            .value("--quota-user", "N", "allocations per user", default: "64"),
            .value("--quota-total", "N", "allocations in all", default: "10000"),
            .value("--bandwidth", "BYTES", "relayed bytes per second per allocation and direction (default: unlimited)"),
            .value("--nonce-lifetime", "DURATION", "how long a nonce stays good (it is good only from the "
                   + "client address and port it was given to)", default: "600s"),
            .value("--stats-interval", "DURATION", "print counters this often; 0 turns it off", default: "5s"),
        ],
        discussion: """
            Prints `zonertc relay: listening on HOST:PORT …` when ready. SIGINT/SIGTERM end every allocation
            (closing relayed sockets) and exit 0. Logs allocations at info level (--log info).
            """,
        run: run)

    static func run(_ args: ParsedCommand) async throws -> Int32 {
        func endpoint(_ text: String, _ flag: String) throws -> Endpoint {
            do { return try Endpoint(parsing: text) } catch { throw UsageError(message: "\(flag): \(error)", command: spec) }
        }
        let listen = try endpoint(try args.required("--listen"), "--listen")
        var relayIP = listen.address
        if let text = args.string("--relay-ip") {
            do { relayIP = try IPAddress(parsing: text) } catch { throw UsageError(message: "--relay-ip: \(error)", command: spec) }
        }
        let users = args.strings("--user")
        let secret = args.string("--auth-secret")
        let authentication: TURNServerConfiguration.Authentication
        switch (users.isEmpty, secret) {
        case (true, nil): throw UsageError(message: "give --user USER:PASSWORD or --auth-secret SECRET", command: spec)
        case (false, .some): throw UsageError(message: "--user and --auth-secret exclude each other", command: spec)
        case (true, .some(let s)): authentication = .sharedSecret(s)
        case (false, nil):
            var table: [String: String] = [:]
            for u in users {
                guard let colon = u.firstIndex(of: ":"), colon != u.startIndex else {
                    throw UsageError(message: "--user \(u): give USER:PASSWORD", command: spec)
                }
                table[String(u[..<colon])] = String(u[u.index(after: colon)...])
            }
            authentication = .users(table)
        }
        let minPort = try args.int("--min-port", in: UInt16(1)...UInt16.max) ?? 49152
        let maxPort = try args.int("--max-port", in: UInt16(1)...UInt16.max) ?? 65535
        guard minPort <= maxPort else { throw UsageError(message: "--min-port is above --max-port", command: spec) }
        var nonceKey = [UInt8](repeating: 0, count: 32)
        var rng = SystemRandomNumberGenerator()
        for i in nonceKey.indices { nonceKey[i] = rng.next() }
        var config = TURNServerConfiguration(realm: try args.required("--realm"), authentication: authentication,
                                             relayAddress: relayIP, nonceKey: nonceKey)
        config.relayPorts = minPort...maxPort
        if let text = args.string("--nonce-lifetime") {
            do { config.nonceLifetime = try StoreServeCommand.parseLongDuration(text) } catch {
                throw UsageError(message: "--nonce-lifetime \(text): \(error)", command: spec)
            }
            guard config.nonceLifetime >= .seconds(1) else {
                throw UsageError(message: "--nonce-lifetime \(text): at least 1s", command: spec)
            }
        }
        config.peerPolicy.allowLoopback = args.has("--allow-loopback-peers")
        for (flag, keyPath) in [("--allow", \PeerAddressPolicy.allow), ("--deny", \PeerAddressPolicy.deny)] {
            for text in args.strings(flag) {
                do { config.peerPolicy[keyPath: keyPath].append(try CIDR(parsing: text)) } catch {
                    throw UsageError(message: "\(flag): \(error)", command: spec)
                }
            }
        }
        config.maxAllocationsPerUser = try args.int("--quota-user", in: 1...1_000_000) ?? 64
        config.maxAllocations = try args.int("--quota-total", in: 1...10_000_000) ?? 10_000
        config.bytesPerSecondPerAllocation = try args.int("--bandwidth", in: 1...Int.max)
        let interval: Duration
        let intervalText = args.string("--stats-interval") ?? "5s"
        do { interval = intervalText == "0" ? .zero : try StoreServeCommand.parseLongDuration(intervalText) } catch {
            throw UsageError(message: "--stats-interval: \(error)", command: spec)
        }
        var options = RelayDaemon.Options(listen: listen, server: config)
        options.threads = try args.int("--threads", in: 1...64) ?? 1
        options.segmentOffload = !args.has("--no-gso")
        if let text = args.string("--batch-wait") {
            do { options.batchWait = text == "0" ? .zero : try StoreServeCommand.parseLongDuration(text) } catch {
                throw UsageError(message: "--batch-wait: \(error)", command: spec)
            }
            guard options.batchWait <= RelayDaemon.Options.maxBatchWait else {
                throw UsageError(message: "--batch-wait \(text): at most 10ms", command: spec)
            }
        }

        let daemon = try RelayDaemon(options: options)
        daemon.start()
        print("zonertc relay: listening on \(daemon.endpoint) (relay \(relayIP), ports \(minPort)-\(maxPort), "
              + "realm \(config.realm), \(options.threads) thread\(options.threads == 1 ? "" : "s"))")
        fflush(nil)
        let stats = interval > .zero ? Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                if Task.isCancelled { break }
                Terminal.error("zonertc relay: " + describe(daemon.counters))
            }
        } : nil
        let signal = await waitForTerminationSignal()
        stats?.cancel()
        Terminal.error("zonertc relay: \(signal), ending \(daemon.counters.activeAllocations) allocations")
        daemon.stop()
        Terminal.error("zonertc relay: stopped; " + describe(daemon.counters))
        Terminal.error("zonertc relay: batches; " + describe(daemon.batchCounters))
        return 0
    }

    /// Data-path batching, for benchmarks: datagrams per recvmmsg, per sendmmsg and per message.
    static func describe(_ b: RelayDaemon.BatchCounters) -> String {
        func ratio(_ x: Int, _ y: Int) -> String { y == 0 ? "-" : String(format: "%.1f", Double(x) / Double(y)) }
        return "received \(b.datagramsReceived) datagrams in \(b.receiveCalls) calls "
            + "(\(ratio(b.datagramsReceived, b.receiveCalls)) per call), "
            + "sent \(b.datagramsSent) in \(b.sendCalls) calls "
            + "(\(ratio(b.datagramsSent, b.sendCalls)) per call) of \(b.messagesSent) messages "
            + "(\(ratio(b.datagramsSent, b.messagesSent)) per message), "
            + "\(b.datagramsNotSent) not taken by the kernel, \(b.pauses) batch waits"
    }

    static func describe(_ c: TURNServer.Counters) -> String {
        "allocations \(c.activeAllocations) active / \(c.allocations) made, requests \(c.requests), "
            + "to peers \(c.packetsToPeers) pkts \(c.bytesToPeers) B, to clients \(c.packetsToClients) pkts "
            + "\(c.bytesToClients) B, dropped \(c.dropped), malformed \(c.malformed), auth failures \(c.authFailures), "
            + "challenges \(c.challenges)"
    }
}
