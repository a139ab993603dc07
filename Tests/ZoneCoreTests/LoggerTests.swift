import Foundation
import Glibc
import Synchronization
import Testing
@testable import ZoneCore

/// Collects lines from a sink, for tests.
private final class Captured: Sendable {
    private let storage = Mutex<[String]>([])

    var lines: [String] { storage.withLock { $0 } }

    var sink: LogSink { LogSink { line in self.storage.withLock { $0.append(line) } } }
}

/// 2026-11-21T09:03:42.123Z.
private let fixedInstant = Instant(nanosecondsSinceEpoch: 1_795_251_822_123_456_789)

private func makeSystem(_ configuration: LogConfiguration) -> (LogSystem, Captured) {
    let captured = Captured()
    let system = LogSystem(configuration: configuration, sink: captured.sink, clock: ManualClock(start: fixedInstant))
    return (system, captured)
}

// MARK: - Levels

@Test func levelParsingIgnoresCase() throws {
    #expect(try LogLevel(parsing: "debug") == .debug)
    #expect(try LogLevel(parsing: "WARNING") == .warning)
    #expect(try LogLevel(parsing: "Notice") == .notice)
    for level in LogLevel.allCases { #expect(try LogLevel(parsing: level.name) == level) }
    #expect(LogLevel.allCases == [.trace, .debug, .info, .notice, .warning, .error])
    #expect(LogLevel.allCases == LogLevel.allCases.sorted())
}

@Test func unknownLevelNamesTheChoices() {
    #expect(throws: LogConfigurationError(
        kind: .unknownLevel, source: "log level", input: "verbose",
        detail: #"unknown level "verbose"; levels are trace, debug, info, notice, warning, error"#)) {
        try LogLevel(parsing: "verbose")
    }
}

@Test func levelFiltering() {
    let (system, captured) = makeSystem(LogConfiguration(level: .notice))
    let log = Logger(component: "t", system: system)
    log.trace("t")
    log.debug("d")
    log.info("i")
    log.notice("n")
    log.warning("w")
    log.error("e")
    log.log(.info, "i2")
    log.log(.error, "e2")
    #expect(captured.lines.map { $0.split(separator: " ").last! } == ["n\n", "w\n", "e\n", "e2\n"])
    #expect(!log.isEnabled(.info) && log.isEnabled(.notice))

    system.configure(LogConfiguration(level: .trace))
    log.trace("t")
    #expect(captured.lines.count == 5)
    #expect(system.configuration == LogConfiguration(level: .trace))
}

@Test func filteredLinesAreNeverBuilt() {
    let (system, captured) = makeSystem(LogConfiguration(level: .warning))
    let log = Logger(component: "t", system: system)
    let built = Atomic<Int>(0)
    func expensive() -> String {
        built.add(1, ordering: .relaxed)
        return "x"
    }
    for _ in 0..<1000 {
        log.debug("value \(expensive())", ["k": expensive()])
        log.info(expensive())
    }
    #expect(built.load(ordering: .relaxed) == 0)
    log.warning(expensive(), ["k": expensive()])
    #expect(built.load(ordering: .relaxed) == 2)
    #expect(captured.lines.count == 1)
}

// MARK: - Formats

@Test func textFormat() {
    let (system, captured) = makeSystem(LogConfiguration(level: .trace, format: .text))
    let log = Logger(component: "store", system: system)
    log.info("saved records", ["zone": "photos", "count": "12"])
    log.warning("disk slow")
    log.notice("peer left", ["reason": "timeout after 30s", "empty": "", "eq": "a=b"])
    #expect(captured.lines == [
        "2026-11-21T09:03:42.123Z info  store: saved records count=12 zone=photos\n",
        "2026-11-21T09:03:42.123Z warning store: disk slow\n",
        #"2026-11-21T09:03:42.123Z notice store: peer left empty="" eq="a=b" reason="timeout after 30s""# + "\n",
    ])
}

@Test func textFormatKeepsOneRecordOnOneLine() {
    let (system, captured) = makeSystem(LogConfiguration(format: .text))
    let log = Logger(component: "rtc", system: system)
    log.error("line one\nline two\ttab \"quoted\" \\ \u{1B}[31m", ["path": "C:\\x", "multi": "a\nb"])
    #expect(captured.lines == [
        #"2026-11-21T09:03:42.123Z error rtc: line one\nline two\ttab "quoted" \ \u001b[31m multi="a\nb" path="C:\\x""#
            + "\n"
    ])
    #expect(captured.lines[0].filter { $0 == "\n" }.count == 1)
}

@Test func jsonFormat() {
    let (system, captured) = makeSystem(LogConfiguration(level: .debug, format: .json))
    let log = Logger(component: "store", system: system)
    log.info("saved", ["zone": "photos", "count": "12"])
    log.debug("plain")
    #expect(captured.lines == [
        #"{"ts":"2026-11-21T09:03:42.123Z","level":"info","component":"store","msg":"saved","#
            + #""count":"12","zone":"photos"}"# + "\n",
        #"{"ts":"2026-11-21T09:03:42.123Z","level":"debug","component":"store","msg":"plain"}"# + "\n",
    ])
}

@Test func jsonEscaping() throws {
    let (system, captured) = makeSystem(LogConfiguration(format: .json))
    let log = Logger(component: "a\"b", system: system)
    let nasty = "q\" b\\ n\n r\r t\t bs\u{08} ff\u{0C} nul\u{00} esc\u{1B} del\u{7F} ls\u{2028} é 😀"
    log.info(nasty, ["k\"ey": nasty])
    let expected = #"q\" b\\ n\n r\r t\t bs\b ff\f nul\u0000 esc\u001b del\u007f ls\u2028 é 😀"#
    #expect(captured.lines == [
        #"{"ts":"2026-11-21T09:03:42.123Z","level":"info","component":"a\"b","msg":""#
            + expected + #"","k\"ey":""# + expected + "\"}\n"
    ])
    // Foundation's JSON parser reads it back to the same strings.
    let object = try JSONSerialization.jsonObject(with: Data(captured.lines[0].utf8)) as? [String: String]
    #expect(object?["msg"] == nasty)
    #expect(object?["k\"ey"] == nasty)
    #expect(object?["component"] == "a\"b")
}

@Test func jsonReservedMetadataKeysArePrefixed() throws {
    let (system, captured) = makeSystem(LogConfiguration(format: .json))
    Logger(component: "c", system: system).info("m", ["msg": "x", "ts": "y", "level": "z", "component": "w"])
    let object = try JSONSerialization.jsonObject(with: Data(captured.lines[0].utf8)) as? [String: String]
    #expect(object == [
        "ts": "2026-11-21T09:03:42.123Z", "level": "info", "component": "c", "msg": "m",
        "meta.msg": "x", "meta.ts": "y", "meta.level": "z", "meta.component": "w",
    ])
}

@Test func timestampsMatchGmtime() {
    var random = SeededRandom(seed: 8601)
    // Instants span about 1678 to 2262 (Int64 nanoseconds); leap days, century rules and times
    // before 1970 all fall inside.
    let samples = [Int64(0), 951_782_400_000, 4_102_444_800_000, -1, -86_400_000, -5_000_000_000_000]
        + (0..<2000).map { _ in Int64(random.next() % 18_000_000_000_000) - 9_000_000_000_000 }
    for ms in samples {
        let text = LogLine.iso8601(.milliseconds(ms))
        var seconds = time_t(ms >= 0 ? ms / 1000 : (ms - 999) / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let expected = String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", Int(parts.tm_year) + 1900, parts.tm_mon + 1,
            parts.tm_mday, parts.tm_hour, parts.tm_min, parts.tm_sec, Int(ms - Int64(seconds) * 1000))
        #expect(text == expected, "\(ms)")
    }
    #expect(LogLine.iso8601(fixedInstant) == "2026-11-21T09:03:42.123Z")
    #expect(LogLine.iso8601(.zero) == "1970-01-01T00:00:00.000Z")
    #expect(LogLine.iso8601(Instant(nanosecondsSinceEpoch: -1)) == "1969-12-31T23:59:59.999Z")
}

// MARK: - Configuration

@Test(arguments: [
    ("debug", LogConfiguration(level: .debug, format: .text)),
    ("debug,json", LogConfiguration(level: .debug, format: .json)),
    ("JSON", LogConfiguration(level: .info, format: .json)),
    ("json,Warning", LogConfiguration(level: .warning, format: .json)),
    (" error , text ", LogConfiguration(level: .error, format: .text)),
    ("trace", LogConfiguration(level: .trace, format: .text)),
])
func settingParsing(setting: String, expected: LogConfiguration) throws {
    #expect(try LogConfiguration(parsing: setting) == expected)
}

@Test(arguments: [
    ("", LogConfigurationError.Kind.empty),
    ("debug,", .empty),
    (",json", .empty),
    ("verbose", .unknownSetting),
    ("debug,xml", .unknownSetting),
    ("debug,info", .conflictingSettings),
    ("json,text", .conflictingSettings),
    ("debug json", .unknownSetting),
])
func settingErrors(setting: String, kind: LogConfigurationError.Kind) {
    do {
        let configuration = try LogConfiguration(parsing: setting, source: "--log")
        Issue.record("\(setting.debugDescription) parsed as \(configuration)")
    } catch {
        #expect(error.kind == kind, "\(error)")
        #expect(error.description.hasPrefix("invalid --log \(setting.debugDescription): "))
    }
}

@Test func environmentParsing() throws {
    #expect(try LogConfiguration.fromEnvironment([:]) == .default)
    #expect(try LogConfiguration.fromEnvironment(["ZONERTC_LOG": ""]) == .default)
    #expect(try LogConfiguration.fromEnvironment(["ZONERTC_LOG": "debug"]) == LogConfiguration(level: .debug))
    #expect(try LogConfiguration.fromEnvironment(["ZONERTC_LOG": "debug,json"])
        == LogConfiguration(level: .debug, format: .json))
    #expect(try LogConfiguration.fromEnvironment(["OTHER": "debug"]) == .default)
    #expect(throws: LogConfigurationError(
        kind: .unknownSetting, source: "ZONERTC_LOG", input: "loud",
        detail: #"unknown setting "loud"; expected a level (trace, debug, info, notice, warning, error)"#
            + #" and/or a format (text, json), e.g. "debug,json""#)) {
        try LogConfiguration.fromEnvironment(["ZONERTC_LOG": "loud"])
    }
    // A flag wins over the environment.
    #expect(try LogConfiguration.resolve(flag: "error", environment: ["ZONERTC_LOG": "debug,json"])
        == LogConfiguration(level: .error))
    #expect(try LogConfiguration.resolve(flag: nil, environment: ["ZONERTC_LOG": "debug,json"])
        == LogConfiguration(level: .debug, format: .json))
}

@Test func sharedSystemIsConfigurable() {
    // The only test that touches the shared system; it restores what it found.
    let before = LogSystem.shared.configuration
    defer { LogSystem.shared.configure(before) }
    LogSystem.shared.configure(LogConfiguration(level: .error, format: .json))
    #expect(LogSystem.shared.configuration == LogConfiguration(level: .error, format: .json))
    #expect(!Logger(component: "x").isEnabled(.warning))
    #expect(Logger(component: "x").isEnabled(.error))
}

// MARK: - Sinks

/// Many threads logging long lines into one pipe: every line arrives whole.
@Test func fileDescriptorSinkWritesWholeLines() throws {
    var fds: [Int32] = [0, 0]
    #expect(pipe(&fds) == 0)
    let (readEnd, writeEnd) = (fds[0], fds[1])
    let system = LogSystem(
        configuration: LogConfiguration(format: .json), sink: .fileDescriptor(writeEnd),
        clock: ManualClock(start: fixedInstant))
    let threads = 8
    let perThread = 200
    // Under PIPE_BUF (4096), where POSIX promises that one write(2) is not interleaved.
    let payload = String(repeating: "x", count: 1500)
    let running = Atomic<Int>(threads)
    for t in 0..<threads {
        // Plain threads, not tasks: the writers block on the pipe while this test reads it.
        Thread.detachNewThread {
            let log = Logger(component: "w\(t)", system: system)
            for i in 0..<perThread { log.info(payload, ["i": "\(i)"]) }
            if running.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 { close(writeEnd) }
        }
    }
    var output = [UInt8]()
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = read(readEnd, &buffer, buffer.count)
        if n <= 0 { break }
        output += buffer[..<n]
    }
    close(readEnd)
    let lines = output.split(separator: UInt8(ascii: "\n"))
    #expect(lines.count == threads * perThread)
    for line in lines {
        let object = try JSONSerialization.jsonObject(with: Data(line)) as? [String: String]
        #expect(object?["msg"] == payload)
    }
}
