import Glibc

/// A failed system call on a socket: which call, and the system's reason.
public struct SocketError: Error, CustomStringConvertible, Sendable {
    public var call: String
    public var code: Int32

    public init(_ call: String, code: Int32 = errno) {
        self.call = call
        self.code = code
    }

    public var description: String { "\(call): \(String(cString: strerror(code)))" }
}
