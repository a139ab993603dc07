import Foundation
import Glibc
import RecordStore

/// A streamed request body (`HTTPServerConnection`'s `.beginSpool`) written to a file as its parts
/// arrive, so an asset upload of up to 50 MB is never held in memory. The file is created
/// exclusively with mode 0600 under the daemon's spool directory; `discard` removes it, and so
/// does the daemon once the request is answered, so an aborted or refused upload leaves nothing.
/// Each write is one read's worth of bytes into the page cache: short enough for the event loop;
/// the fsync that makes an accepted upload durable runs on a worker (`AssetStorage`).
final class BodySpool {
    let path: String
    let length: Int
    private var fd: Int32
    private var written = 0
    /// Why the body could not be kept, if it could not.
    private(set) var failure: String?

    init(directory: String, length: Int, id: UInt64) {
        path = "\(directory)/upload-\(getpid())-\(id)-\(UInt64.random(in: 0...UInt64.max)).spool"
        self.length = length
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if fd < 0 { failure = "cannot create a spool file in \(directory): \(errnoText())" }
    }

    func write(_ bytes: [UInt8]) {
        guard failure == nil, fd >= 0 else { return }
        if let problem = writeFully(fd, bytes) {
            failure = "cannot write the spool file: \(problem)"
            return
        }
        written += bytes.count
    }

    /// Closes the file: the complete body, or nil (with `failure`) when it is not.
    func finish() -> SpooledBody? {
        closeFile()
        guard failure == nil, written == length else {
            if failure == nil { failure = "the spool file holds \(written) of \(length) bytes" }
            return nil
        }
        return SpooledBody(path: path, length: length)
    }

    /// Closes and removes the file (gone already when a handler moved it away).
    func discard() {
        closeFile()
        unlink(path)
    }

    private func closeFile() {
        if fd >= 0 { close(fd) }
        fd = -1
    }

    deinit { closeFile() }
}

/// The directory spooled uploads go to.
public enum BodySpoolDirectory {
    /// Makes `path` (mode 0700) and empties it of spool files a crash left: an upload is only
    /// acknowledged once its file was moved to the asset store, so none of them was.
    public static func prepare(_ path: String) throws -> String {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        for name in try FileManager.default.contentsOfDirectory(atPath: path) where name.hasSuffix(".spool") {
            unlink("\(path)/\(name)")
        }
        return path
    }
}
