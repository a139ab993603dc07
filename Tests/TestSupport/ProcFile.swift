// Reading a /proc file whole. /proc files report a size of 0 and come a page at a time, and
// Foundation's `String(contentsOfFile:)` returns only the first 4 KB of them: /proc/net/udp then
// lists about 30 sockets, and a socket further down (with other tests running, most of them) looks
// absent. This reads until end of file.
import Glibc

/// The whole text of `path` (read(2) until end of file), or nil if it cannot be opened.
public func readProcFile(_ path: String) -> String? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n < 0 && errno == EINTR { continue }
        guard n > 0 else { break }
        bytes += chunk[..<n]
    }
    return String(decoding: bytes, as: UTF8.self)
}
