import Foundation
import Glibc
import Testing
import TestSupport

/// The one helper every process-based test waits with. Its predicate reads the output without
/// holding the lock; output that arrives while it looks must wake the wait at once. It once slept
/// through such output until the child's next line: a wait for ffmpeg's second bound socket woke
/// only when ffmpeg gave up 10 s later, and the sender then streamed to nobody.
@Suite("ProcessWatch")
struct ProcessWatchTests {
    @Test("output that arrives while the predicate looks wakes the wait at once")
    func outputDuringThePredicate() throws {
        var fds: [Int32] = [-1, -1]
        try #require(pipe(&fds) == 0)
        // The child echoes one line, then waits for more input (end of file ends it).
        let watch = try spawnWatched(["/bin/sh", "-c", "read line; echo \"$line\"; read rest"], stdin: fds[0])
        close(fds[0])
        defer {
            close(fds[1])
            if watch.wait(within: .seconds(5)) == nil {
                kill(watch.pid, SIGKILL)
                _ = watch.wait(within: .seconds(5))
            }
        }
        var looks = 0
        let started = ContinuousClock.now
        let held = watch.wait(within: .seconds(30)) { watch in
            looks += 1
            guard looks == 1 else { return watch.stdout.contains("ping") }
            // The first look: the line is sent, echoed and read back before this look says "not yet".
            _ = write(fds[1], "ping\n", 5)
            #expect(watch.wait(within: .seconds(20)) { $0.stdout.contains("ping") })
            return false
        }
        #expect(held && looks >= 2)
        // Nothing else happens for 30 s: only the event seen during the first look can end the wait.
        #expect(ContinuousClock.now - started < .seconds(15), "woke after \(ContinuousClock.now - started)")
    }

    @Test("a socket far down /proc/net/udp is found (the file is read past its first page)")
    func procFileReadWhole() throws {
        // 200 sockets of our own put /proc/net/udp well past one 4 KB page (about 30 sockets).
        let sockets = (0..<200).map { _ in socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0) }
        defer { for fd in sockets { close(fd) } }
        var ports: [UInt16] = []
        for fd in sockets {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
                }
            }
            try #require(bound)
            ports.append(UInt16(bigEndian: address.sin_port))
        }
        let missing = ports.filter { !udpPortIsBound($0) }
        #expect(missing.isEmpty, "\(missing.count) of \(ports.count) bound ports not found")
    }

    @Test("a fault signal or the Swift runtime's crash report is a crash; other ends are not")
    func crashReports() {
        #expect(ChildCrash.report(status: 128 + SIGSEGV, stderr: "") != nil)
        #expect(ChildCrash.report(status: 128 + SIGILL, stderr: "") != nil)
        #expect(ChildCrash.report(status: 1, stderr: "usage\n*** Program crashed: Bad pointer dereference") != nil)
        #expect(ChildCrash.report(status: 1, stderr: "zonertc: the token file may be read by others") == nil)
        #expect(ChildCrash.report(status: 128 + SIGTERM, stderr: "") == nil)
        #expect(ChildCrash.report(status: 128 + SIGKILL, stderr: "") == nil)
        #expect(ChildCrash.report(status: nil, stderr: "") == nil)
    }
}
