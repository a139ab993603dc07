// Errors from opening, reading and writing video files: the path, what went wrong and, for a
// file that does not parse, the byte offset (from the container reader's `MediaError`).

#if canImport(Glibc)
import Glibc
#endif

/// A typed error from `VideoFileSource` or `VideoFileSink`.
public struct VideoFileError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Kind: Equatable, Sendable {
        /// The file could not be opened or created.
        case cannotOpen
        /// A read or write system call failed.
        case io
        /// Neither the first bytes nor the extension name a container this module reads.
        case unknownContainer
        /// The contents do not parse (see `mediaError` for the kind and offset).
        case malformed
        /// A frame does not fit the container being written (a Y4M frame of the wrong size).
        case frameMismatch
    }

    public var kind: Kind
    public var path: String
    /// The parse error, for `.malformed`.
    public var mediaError: MediaError?
    public var message: String

    public init(_ kind: Kind, path: String, _ message: String, mediaError: MediaError? = nil) {
        self.kind = kind
        self.path = path
        self.message = message
        self.mediaError = mediaError
    }

    /// The byte offset of a parse error, if there is one.
    public var offset: Int? { mediaError?.offset }

    static func system(_ kind: Kind, path: String, _ call: String, errno code: Int32) -> VideoFileError {
        VideoFileError(kind, path: path, "\(call): \(String(cString: strerror(code)))")
    }

    static func malformed(path: String, _ error: MediaError) -> VideoFileError {
        VideoFileError(.malformed, path: path, error.description, mediaError: error)
    }

    public var description: String { "\(path): \(message)" }
}

/// An open file descriptor, closed when the last reference goes. File sources and sinks are
/// used from one thread at a time (their driver's); the class only ties the descriptor's
/// lifetime to theirs.
final class FileDescriptor: @unchecked Sendable {
    let fd: Int32
    let path: String

    init(path: String, flags: Int32, mode: mode_t = 0o644) throws(VideoFileError) {
        let fd = open(path, flags | O_CLOEXEC, mode)
        guard fd >= 0 else { throw .system(.cannotOpen, path: path, "open", errno: errno) }
        self.fd = fd
        self.path = path
    }

    deinit { close(fd) }

    /// Reads up to `count` bytes into `buffer` (replacing it); empty at end of file.
    func read(into buffer: inout [UInt8], count: Int) throws(VideoFileError) {
        var failure: Int32 = 0
        buffer = [UInt8](unsafeUninitializedCapacity: count) { raw, initialized in
            var n: Int
            repeat {
                n = Glibc.read(fd, raw.baseAddress, count)
            } while n < 0 && errno == EINTR
            if n < 0 { failure = errno }
            initialized = max(0, n)
        }
        if failure != 0 { throw .system(.io, path: path, "read", errno: failure) }
    }

    /// Writes all of `bytes` at the current position (or at `offset`, with pwrite).
    func write(_ bytes: [UInt8], at offset: Int? = nil) throws(VideoFileError) {
        let failure: Int32 = bytes.withUnsafeBytes { raw in
            var done = 0
            while done < raw.count {
                let base = raw.baseAddress! + done
                let n = offset.map { pwrite(fd, base, raw.count - done, off_t($0 + done)) }
                    ?? Glibc.write(fd, base, raw.count - done)
                if n < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                done += n
            }
            return 0
        }
        if failure != 0 { throw .system(.io, path: path, offset == nil ? "write" : "pwrite", errno: failure) }
    }
}
