import Glibc

/// Replaces `target` with `bytes` so that a crash leaves the old file or the new one, never a mix:
/// written beside it (`target.tmp`, created with `mode`), synced, renamed over it, and its directory
/// synced so the rename itself survives. The system's reason on failure, nil on success.
public func replaceFileDurably(_ target: String, with bytes: [UInt8], mode: mode_t = 0o644) -> String? {
    let tmp = target + ".tmp"
    let fd = Glibc.open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
    guard fd >= 0 else { return "cannot create \(tmp): \(errnoText())" }
    defer { close(fd) }
    if let problem = writeFully(fd, bytes) { return "cannot write \(tmp): \(problem)" }
    guard fsync(fd) == 0 else { return "cannot sync \(tmp): \(errnoText())" }
    guard rename(tmp, target) == 0 else { return "cannot rename \(tmp) to \(target): \(errnoText())" }
    let slash = target.lastIndex(of: "/")
    syncDirectory(slash.map { $0 == target.startIndex ? "/" : String(target[..<$0]) } ?? ".")
    return nil
}

/// Syncs a directory, so that the names created, renamed or removed in it last.
public func syncDirectory(_ path: String) {
    let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    if fd >= 0 { fsync(fd); close(fd) }
}
