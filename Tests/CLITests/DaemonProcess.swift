import Foundation
import ZoneCore

/// `zonertc store serve` as a child process: started, its endpoint read from its first line.
final class DaemonProcess: @unchecked Sendable {
    let process = Process()
    let endpoint: Endpoint
    private let stdout = Pipe()

    init(arguments: [String]) throws {
        process.executableURL = ZonertcProcess.binary
        process.arguments = ["store", "serve", "--listen", "127.0.0.1:0"] + arguments
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        try process.run()
        var line = [UInt8]()
        let handle = stdout.fileHandleForReading
        while !line.contains(10) {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            line += chunk
        }
        let text = String(decoding: line, as: UTF8.self)
        guard let range = text.range(of: #"127\.0\.0\.1:\d+"#, options: .regularExpression) else {
            process.terminate()
            throw CocoaError(.fileReadCorruptFile, userInfo: [NSLocalizedDescriptionKey: "daemon said: \(text)"])
        }
        endpoint = try Endpoint(parsing: String(text[range]))
    }

    func kill(_ signal: Int32) {
        Glibc.kill(process.processIdentifier, signal)
        process.waitUntilExit()
    }

    deinit { if process.isRunning { kill(SIGKILL) } }
}
