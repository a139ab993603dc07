import Foundation
import Glibc
import Synchronization

// MARK: - Levels and formats

/// How important a log line is; a logger prints lines at or above its configured level.
public enum LogLevel: UInt8, Comparable, Sendable, CaseIterable, CustomStringConvertible {
    /// Step-by-step detail (every packet, every state change); off except while debugging.
    case trace
    /// Detail useful to a developer following one request.
    case debug
    /// Normal operation worth a line: started, listening, finished.
    case info
    /// Normal but significant: configuration changed, a peer went away.
    case notice
    /// Something went wrong and was handled: retries, dropped malformed input.
    case warning
    /// Something failed and was not handled: a request failed, data was not saved.
    case error

    /// Parses a level name (`trace` … `error`), ignoring case.
    public init(parsing text: String) throws(LogConfigurationError) {
        let lowered = text.lowercased()
        guard let level = LogLevel.allCases.first(where: { $0.name == lowered }) else {
            throw LogConfigurationError(
                kind: .unknownLevel, source: "log level", input: text,
                detail: "unknown level \(text.debugDescription); levels are \(LogLevel.names)")
        }
        self = level
    }

    /// The lowercase name, as printed and parsed.
    public var name: String {
        switch self {
        case .trace: "trace"
        case .debug: "debug"
        case .info: "info"
        case .notice: "notice"
        case .warning: "warning"
        case .error: "error"
        }
    }

    public var description: String { name }

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }

    fileprivate static let names = allCases.map(\.name).joined(separator: ", ")
}

/// How log lines are written.
public enum LogFormat: Sendable, CaseIterable, CustomStringConvertible {
    /// One line for people: `2026-11-21T09:03:42.123Z info  store: message key=value`.
    case text
    /// One JSON object per line for machines:
    /// `{"ts":"…","level":"info","component":"store","msg":"message","key":"value"}`.
    case json

    /// The lowercase name, as parsed.
    public var name: String {
        switch self {
        case .text: "text"
        case .json: "json"
        }
    }

    public var description: String { name }

    fileprivate static let names = allCases.map(\.name).joined(separator: ", ")
}

// MARK: - Configuration

/// Why a log setting could not be understood.
public struct LogConfigurationError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What was wrong.
    public enum Kind: Equatable, Sendable {
        /// A level name that is not one of `trace`, `debug`, `info`, `notice`, `warning`, `error`.
        case unknownLevel
        /// A word in a setting that is neither a level nor a format.
        case unknownSetting
        /// Two levels or two formats in one setting (`debug,info`).
        case conflictingSettings
        /// An empty setting or an empty word between commas.
        case empty
    }

    /// What was wrong.
    public var kind: Kind
    /// Where the setting came from: `ZONERTC_LOG`, a command-line flag, or "log level".
    public var source: String
    /// The whole setting as given.
    public var input: String
    /// The problem in words.
    public var detail: String

    public init(kind: Kind, source: String, input: String, detail: String) {
        self.kind = kind
        self.source = source
        self.input = input
        self.detail = detail
    }

    public var description: String { "invalid \(source) \(input.debugDescription): \(detail)" }
}

/// The level and format of log output.
///
/// A setting is a comma-separated list of at most one level and at most one format, in any order
/// and any case: `debug`, `json`, `debug,json`, `JSON, Warning`. Whatever is not named keeps its
/// default (level `info`, format `text`). The same syntax serves the `ZONERTC_LOG` environment
/// variable and command-line flags.
public struct LogConfiguration: Equatable, Sendable {
    /// Lines below this level are dropped.
    public var level: LogLevel
    /// How lines are written.
    public var format: LogFormat

    /// The environment variable `fromEnvironment()` reads.
    public static let environmentVariable = "ZONERTC_LOG"

    /// Level `info`, format `text`.
    public static let `default` = LogConfiguration()

    public init(level: LogLevel = .info, format: LogFormat = .text) {
        self.level = level
        self.format = format
    }

    /// Parses a setting such as `debug,json`; `source` names where it came from in errors.
    public init(parsing setting: String, source: String = "log setting") throws(LogConfigurationError) {
        func failure(_ kind: LogConfigurationError.Kind, _ detail: String) -> LogConfigurationError {
            LogConfigurationError(kind: kind, source: source, input: setting, detail: detail)
        }
        let usage = "expected a level (\(LogLevel.names)) and/or a format (\(LogFormat.names)), e.g. \"debug,json\""
        var level: LogLevel?
        var format: LogFormat?
        for word in setting.split(separator: ",", omittingEmptySubsequences: false) {
            let token = word.trimmingCharacters(in: .whitespaces).lowercased()
            if token.isEmpty { throw failure(.empty, "empty setting; \(usage)") }
            if let named = LogLevel.allCases.first(where: { $0.name == token }) {
                if let level { throw failure(.conflictingSettings, "two levels, \(level) and \(named)") }
                level = named
            } else if let named = LogFormat.allCases.first(where: { $0.name == token }) {
                if let format { throw failure(.conflictingSettings, "two formats, \(format) and \(named)") }
                format = named
            } else {
                throw failure(.unknownSetting, "unknown setting \(String(word).debugDescription); \(usage)")
            }
        }
        self.init(level: level ?? .info, format: format ?? .text)
    }

    /// The configuration named by `ZONERTC_LOG`, or the default when it is unset or empty.
    public static func fromEnvironment(
        _ environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(LogConfigurationError) -> LogConfiguration {
        guard let setting = environment[environmentVariable], !setting.isEmpty else { return .default }
        return try LogConfiguration(parsing: setting, source: environmentVariable)
    }

    /// The configuration from a command-line flag if one was given, else from the environment:
    /// the flag wins because it is the more deliberate of the two.
    public static func resolve(
        flag: String?, flagName: String = "--log",
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(LogConfigurationError) -> LogConfiguration {
        if let flag { return try LogConfiguration(parsing: flag, source: flagName) }
        return try fromEnvironment(environment)
    }
}

// MARK: - Sinks

/// Where finished log lines go. Each call receives one whole line ending in a newline.
public struct LogSink: Sendable {
    private let body: @Sendable (String) -> Void

    /// A sink that hands each line to `write`; tests use it to capture output.
    public init(_ write: @escaping @Sendable (_ line: String) -> Void) {
        body = write
    }

    /// Writes one line.
    public func write(_ line: String) { body(line) }

    /// Standard error through a queue and a writer thread (`QueuedLogOutput.standardError`), the
    /// default: whoever logs never waits for the reader, and lines it could not keep up with are
    /// dropped and counted.
    public static let standardError = queued(.standardError)

    /// Lines handed to `output`'s writer thread.
    public static func queued(_ output: QueuedLogOutput) -> LogSink {
        LogSink { line in output.enqueue(line) }
    }

    /// A file descriptor that stays open for as long as the sink is used, written on the caller's
    /// thread (a full pipe blocks the caller; see `queued` for output that must never block).
    ///
    /// Each line goes out in one `write(2)`, so lines from different threads and processes never
    /// interleave within a line on a pipe (up to `PIPE_BUF`, 4096 bytes) or an `O_APPEND` file.
    /// Only a short write (a full disk, a signal) makes a second call for the rest. Errors are
    /// dropped: a failing log must not take the program down with it.
    public static func fileDescriptor(_ fd: Int32) -> LogSink {
        LogSink { line in writeWhole(line, to: fd) }
    }

    static func writeWhole(_ line: String, to fd: Int32) {
        var line = line
        line.withUTF8 { buffer in
            guard var next = buffer.baseAddress else { return }
            var left = buffer.count
            while left > 0 {
                let written = Glibc.write(fd, next, left)
                if written > 0 {
                    next += written
                    left -= written
                } else if written < 0 && errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
    }
}

// MARK: - Log system

/// The shared state behind loggers: level, format, sink and clock.
///
/// `LogSystem.shared` is what `Logger(component:)` uses; it starts from `ZONERTC_LOG` (see
/// `LogConfiguration`) and programs change it with `configure(_:)`. Tests make their own system
/// with a capturing sink and a manual clock, so they neither print nor share state.
///
/// The level lives in an atomic so that a line below it costs one relaxed load and a compare;
/// everything else sits behind a mutex that is only taken for lines that are printed.
public final class LogSystem: Sendable {
    private struct State: Sendable {
        var configuration: LogConfiguration
        var sink: LogSink
        var clock: any InstantSource
    }

    private let minimumLevel: Atomic<UInt8>
    private let state: Mutex<State>

    /// The process-wide system. Its first use reads `ZONERTC_LOG`; an invalid value is reported
    /// as a warning on standard error and the default (`info`, `text`) is used instead, because a
    /// typo in a log setting should not stop a daemon. Programs that prefer to fail call
    /// `LogConfiguration.resolve(flag:)` themselves and pass the result to `configure(_:)`.
    public static let shared: LogSystem = {
        do throws(LogConfigurationError) {
            return LogSystem(configuration: try .fromEnvironment())
        } catch {
            let system = LogSystem()
            Logger(component: "log", system: system).warning("ignoring \(error); using info,text")
            return system
        }
    }()

    public init(
        configuration: LogConfiguration = .default, sink: LogSink = .standardError,
        clock: any InstantSource = WallClock()
    ) {
        minimumLevel = Atomic(configuration.level.rawValue)
        state = Mutex(State(configuration: configuration, sink: sink, clock: clock))
    }

    /// The current level and format.
    public var configuration: LogConfiguration { state.withLock { $0.configuration } }

    /// Changes level and format for every logger using this system.
    public func configure(_ configuration: LogConfiguration) {
        state.withLock { state in
            state.configuration = configuration
            minimumLevel.store(configuration.level.rawValue, ordering: .relaxed)
        }
    }

    /// Sends lines to `sink` from now on.
    public func setSink(_ sink: LogSink) { state.withLock { $0.sink = sink } }

    /// Takes timestamps from `clock` from now on (tests fix the time this way).
    public func setClock(_ clock: any InstantSource) { state.withLock { $0.clock = clock } }

    /// Whether a line at `level` would be printed.
    @inline(__always)
    public func isEnabled(_ level: LogLevel) -> Bool {
        level.rawValue >= minimumLevel.load(ordering: .relaxed)
    }

    fileprivate func emit(_ level: LogLevel, _ component: String, _ message: String, _ metadata: [String: String]) {
        let (format, sink, clock) = state.withLock { ($0.configuration.format, $0.sink, $0.clock) }
        let line = LogLine.format(
            format, timestamp: clock.now(), level: level, component: component, message: message,
            metadata: metadata)
        sink.write(line)
    }
}

// MARK: - Logger

/// A named source of log lines, cheap to create and copy: `Logger(component: "store")`.
///
/// The message and metadata are autoclosures, so a line below the configured level is never
/// built: `logger.debug("state \(expensive())")` costs an atomic load when debug is off.
public struct Logger: Sendable {
    /// Printed with every line to say which part of the program wrote it.
    public let component: String
    /// Where lines go and which are kept.
    public let system: LogSystem

    public init(component: String, system: LogSystem = .shared) {
        self.component = component
        self.system = system
    }

    /// Whether a line at `level` would be printed, for work that an autoclosure cannot defer.
    public func isEnabled(_ level: LogLevel) -> Bool { system.isEnabled(level) }

    /// Writes a line at `level` if the configuration lets it through.
    public func log(
        _ level: LogLevel, _ message: @autoclosure () -> String,
        _ metadata: @autoclosure () -> [String: String] = [:]
    ) {
        guard system.isEnabled(level) else { return }
        system.emit(level, component, message(), metadata())
    }

    /// Writes a `trace` line.
    public func trace(_ message: @autoclosure () -> String, _ metadata: @autoclosure () -> [String: String] = [:]) {
        log(.trace, message(), metadata())
    }

    /// Writes a `debug` line.
    public func debug(_ message: @autoclosure () -> String, _ metadata: @autoclosure () -> [String: String] = [:]) {
        log(.debug, message(), metadata())
    }

    /// Writes an `info` line.
    public func info(_ message: @autoclosure () -> String, _ metadata: @autoclosure () -> [String: String] = [:]) {
        log(.info, message(), metadata())
    }

    /// Writes a `notice` line.
    public func notice(_ message: @autoclosure () -> String, _ metadata: @autoclosure () -> [String: String] = [:]) {
        log(.notice, message(), metadata())
    }

    /// Writes a `warning` line.
    public func warning(_ message: @autoclosure () -> String, _ metadata: @autoclosure () -> [String: String] = [:]) {
        log(.warning, message(), metadata())
    }

    /// Writes an `error` line.
    public func error(_ message: @autoclosure () -> String, _ metadata: @autoclosure () -> [String: String] = [:]) {
        log(.error, message(), metadata())
    }
}

// MARK: - Formatting

/// Builds the text of one line; internal so tests can check the formats directly.
enum LogLine {
    /// Metadata keys that would collide with the fixed JSON fields get this prefix.
    static let reservedKeyPrefix = "meta."
    private static let reservedKeys: Set<String> = ["ts", "level", "component", "msg"]

    /// One whole line, newline included. Metadata is written in key order so that output is
    /// reproducible and diffable.
    static func format(
        _ format: LogFormat, timestamp: Instant, level: LogLevel, component: String, message: String,
        metadata: [String: String]
    ) -> String {
        var line = ""
        line.reserveCapacity(64 + message.utf8.count + metadata.count * 24)
        let keys = metadata.keys.sorted()
        switch format {
        case .text:
            // `info  store: message k=v`: the level is padded to five columns as in the examples;
            // `notice` and `warning` stick out by design rather than padding every line to seven.
            line += iso8601(timestamp)
            line += " "
            line += level.name
            line += String(repeating: " ", count: max(1, 6 - level.name.utf8.count))
            line += component
            line += ": "
            // Control characters are escaped so that one record is always one line.
            appendEscaped(message, to: &line, quoting: false)
            for key in keys {
                line += " "
                appendTextToken(key, to: &line)
                line += "="
                appendTextToken(metadata[key]!, to: &line)
            }
        case .json:
            line += "{\"ts\":\""
            line += iso8601(timestamp)
            line += "\",\"level\":\""
            line += level.name
            line += "\",\"component\":"
            appendJSONString(component, to: &line)
            line += ",\"msg\":"
            appendJSONString(message, to: &line)
            for key in keys {
                line += ","
                appendJSONString(reservedKeys.contains(key) ? reservedKeyPrefix + key : key, to: &line)
                line += ":"
                appendJSONString(metadata[key]!, to: &line)
            }
            line += "}"
        }
        line += "\n"
        return line
    }

    /// A metadata key or value in text format: bare when it is unambiguous, otherwise quoted and
    /// escaped like a JSON string (empty, spaces, `"`, `=`, `\` or control characters).
    static func appendTextToken(_ token: String, to line: inout String) {
        let plain = !token.isEmpty && token.utf8.allSatisfy { byte in
            byte > 0x20 && byte != 0x7F && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "=")
                && byte != UInt8(ascii: "\\")
        }
        if plain {
            line += token
        } else {
            appendJSONString(token, to: &line)
        }
    }

    /// `text` as a JSON string literal, quotes included (RFC 8259 section 7).
    static func appendJSONString(_ text: String, to line: inout String) {
        line += "\""
        appendEscaped(text, to: &line, quoting: true)
        line += "\""
    }

    static func appendEscaped(_ text: String, to line: inout String, quoting: Bool) {
        JSONString.appendEscaped(text, to: &line, quoting: quoting)
    }

    /// `2026-11-21T09:03:42.123Z`: UTC, milliseconds rounded down.
    static func iso8601(_ instant: Instant) -> String {
        let ms = instant.millisecondsSinceEpoch
        let dayMs: Int64 = 86_400_000
        let days = ms >= 0 ? ms / dayMs : (ms - dayMs + 1) / dayMs
        let msOfDay = ms - days * dayMs
        let (year, month, day) = civilDate(daysSinceEpoch: days)
        return pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + "T"
            + pad(msOfDay / 3_600_000, 2) + ":" + pad(msOfDay / 60_000 % 60, 2) + ":"
            + pad(msOfDay / 1000 % 60, 2) + "." + pad(msOfDay % 1000, 3) + "Z"
    }

    /// Proleptic Gregorian year, month and day for a day count since 1970-01-01
    /// (Howard Hinnant's `civil_from_days`), so no calendar object or locale is involved.
    static func civilDate(daysSinceEpoch: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = daysSinceEpoch + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value.magnitude)
        let zeros = String(repeating: "0", count: max(0, width - digits.count))
        return (value < 0 ? "-" : "") + zeros + digits
    }
}
