#if PostgreSQL
import Foundation
import Glibc
import RecordStore
import ZoneCore

extension PostgresStore {
    /// The listener thread: LISTENs on the store's channel and, on every notification (and every
    /// `pollInterval` without one), reads the new log entries and delivers their notifications to
    /// this process's push streams. A dropped connection is re-established with backoff; the
    /// first read after it covers whatever was written meanwhile.
    func listenerLoop() {
        var conn: PostgresConnection?
        // The server this connection's notifications come from: a `dN` answers writes committed on it.
        var server: [UInt8]?
        var backoff = 0.05
        var lastRead = Date.distantPast
        // Not at once: daemons that start together would all compact together.
        var nextCompaction = Date(timeIntervalSinceNow: Double(options.compactionInterval?.nanoseconds ?? 0) / 1e9)
        let interval = Double(options.pollInterval.components.seconds)
            + Double(options.pollInterval.components.attoseconds) / 1e18
        let quoted = "\"" + channel.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        while !stopping.load(ordering: .sequentiallyConsistent) {
            do {
                if conn == nil {
                    let c = try PostgresConnection(url: options.url, role: "zonertc-listen")
                    try c.execute("LISTEN \(quoted)")
                    server = try c.query("SELECT pg_postmaster_start_time()::text").rows.first?[0] ?? nil
                    conn = c
                    backoff = 0.05
                    core.withLock { $0.counters.listenConnects += 1 }
                    try catchUpAllowingRebuild(c)
                    lastRead = Date()
                }
                guard let c = conn else { continue }
                // Notifications that arrived during the last catch-up's query are already in
                // libpq's buffer, not on the socket: take them before waiting on it.
                var heard = try c.notifications()
                if heard.isEmpty {
                    var fds = [pollfd(fd: c.socket, events: Int16(POLLIN), revents: 0)]
                    let waitMs = Int32(max(1, min(250, interval * 1000)))
                    _ = poll(&fds, 1, waitMs)
                    heard = try c.notifications()
                }
                let behind = heard.isEmpty ? false : takeIn(heard.map(\.payload), server: server)
                if behind || Date().timeIntervalSince(lastRead) >= interval {
                    try catchUpAllowingRebuild(c)
                    lastRead = Date()
                }
                if let every = options.compactionInterval, Date() >= nextCompaction {
                    nextCompaction = Date(timeIntervalSinceNow: Double(every.nanoseconds) / 1e9)
                    do { _ = try compact(c, olderThan: options.configuration.tokenRetention) } catch {
                        log.warning("compaction failed", ["error": "\(error)"])
                    }
                }
            } catch {
                if conn != nil { log.warning("listen connection lost; reconnecting", ["error": "\(error)"]) }
                conn?.close()
                conn = nil
                // Bounded backoff, woken early by nothing: the loop re-checks `stopping` after it.
                var fds: [pollfd] = []
                _ = poll(&fds, 0, Int32(backoff * 1000))
                backoff = min(backoff * 2, 1)
            }
        }
        conn?.close()
    }

    /// Takes in notifications' payloads: `N` (entry N was committed) or `dN` (entries up to N are
    /// durable, from a flusher). A durable mark needs no query: the notifications it releases go
    /// out at once, and it answers the writes it covers that were committed on `server`, the
    /// listening connection's. Returns whether the log has entries this replica lacks (read them now).
    private func takeIn(_ payloads: [String], server: [UInt8]?) -> Bool {
        var newest: UInt64 = 0, mark: UInt64 = 0, invalid = 0
        for p in payloads {
            if p.hasPrefix("d"), let n = UInt64(p.dropFirst()) { mark = max(mark, n) }
            else if let n = UInt64(p) { newest = max(newest, n) }
            else { invalid += 1 }
        }
        typealias Released = (behind: Bool, notes: [DeviceNotification], ready: [CheckedContinuation<Void, Error>],
                              covered: [PendingWrite])
        let (behind, notes, ready, covered) = core.withLock { c -> Released in
            c.counters.notificationsHeard += payloads.count
            c.counters.failures += invalid
            let behind = max(newest, mark) > c.replica.appliedSequence
            let covered = mark > 0 ? c.takeCovered(upTo: mark, server: server) : []
            c.counters.sharedAcknowledgements += covered.count
            guard mark > c.durable, c.rebuildNeeded == nil else { return (behind, [], [], covered) }
            let (notes, ready) = c.markDurable(mark)
            return (behind, notes, ready, covered)
        }
        if invalid > 0 { log.warning("notifications with a payload not ours ignored", ["count": "\(invalid)"]) }
        for w in ready { w.resume() }
        for w in covered { w.finish(nil) }
        if !notes.isEmpty { push.submit(notes) }
        return behind
    }

    /// A catch-up that tolerates a replica waiting for the writer to rebuild it (nothing to do then).
    private func catchUpAllowingRebuild(_ c: PostgresConnection) throws {
        do { try catchUp(c, deliver: true) } catch let e as StoreError where e.code == .serviceUnavailable {
            return
        }
    }
}
#endif
