import Glibc

/// The bytes of the file at `path`, read straight into the array that is returned (no `Data` to
/// copy them out of: an asset file is up to 50 MB). Nil when there is no such file; the system's
/// reason when it cannot be read.
public func readFileBytes(_ path: String) -> Result<[UInt8], FileBytesError>? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    if fd < 0 {
        if errno == ENOENT { return nil }
        return .failure(FileBytesError(message: "cannot open \(path): \(errnoText())"))
    }
    defer { close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0 else { return .failure(FileBytesError(message: "cannot stat \(path): \(errnoText())")) }
    let size = Int(info.st_size)
    var failure: String?
    let bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
        count = 0
        while count < size {
            let n = read(fd, buffer.baseAddress! + count, size - count)
            if n > 0 {
                count += n
            } else if n < 0 && errno == EINTR {
                continue
            } else {
                failure = n == 0 ? "\(path) ended after \(count) of \(size) bytes" : "cannot read \(path): \(errnoText())"
                return
            }
        }
    }
    if let failure { return .failure(FileBytesError(message: failure)) }
    return .success(bytes)
}

/// Why `readFileBytes` could not read a file.
public struct FileBytesError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
