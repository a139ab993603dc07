#if PostgreSQL
import CLibPQ
import Foundation

/// What went wrong talking to PostgreSQL: the connection (the server went away, or never
/// answered: retry later on a new one) or a statement (the server refused it).
public struct PostgresError: Error, CustomStringConvertible, Sendable {
    public enum Kind: Sendable { case connection, statement }
    public var kind: Kind
    public var message: String
    /// The server's SQLSTATE for a refused statement (e.g. 40001, 55P03).
    public var sqlState: String?

    public var description: String { message + (sqlState.map { " (SQLSTATE \($0))" } ?? "") }
}

/// One libpq connection, used by one thread at a time. Its calls block that thread (never a
/// thread of Swift concurrency's pool: see `PostgresThreads`); every wait is bounded by the
/// connect timeout and the session's statement, lock and idle-transaction timeouts.
final class PostgresConnection {
    /// A statement parameter, sent in binary.
    enum Parameter {
        case int8(Int64)
        case text(String)
        case bytea([UInt8])

        /// The parameter's type: int8, text or bytea.
        var typeOID: UInt32 {
            switch self {
            case .int8: 20
            case .text: 25
            case .bytea: 17
            }
        }
    }

    /// Rows of a result, each column's raw bytes (binary format for `query`, text for `execute`).
    struct Rows {
        var rows: [[[UInt8]?]]
        var count: Int { rows.count }
    }

    private var conn: OpaquePointer?
    /// Statements prepared on this session (names `zonertc_N`): the server parses and plans each
    /// once per connection rather than once per call, which was a large share of its CPU per write.
    private var prepared: [PreparedKey: String] = [:]

    /// Connects to `url` (a libpq URI or key=value string) and sets the session's timeouts. The
    /// role (`zonertc-write`, `-read`, `-listen`) is the session's application_name, for operators.
    init(url: String, role: String = "zonertc", connectTimeoutSeconds: Int = 5) throws(PostgresError) {
        // Keywords are applied in order: the URL's own settings, if any, win.
        let keywords = ["connect_timeout", "application_name", "dbname"]
        let values = [String(connectTimeoutSeconds), role, url]
        let c: OpaquePointer? = withCStrings(keywords) { k in withCStrings(values) { v in PQconnectdbParams(k, v, 1) } }
        conn = c
        guard let c, PQstatus(c) == CONNECTION_OK else {
            let message = c.map { String(cString: PQerrorMessage($0)) } ?? "out of memory"
            close()
            throw PostgresError(kind: .connection, message: "cannot connect: \(message.trimmed)")
        }
        // A daemon that stops mid-transaction must not hold the log's lock for long; no wait is unbounded.
        try execute("SET statement_timeout = '15s'; SET lock_timeout = '10s'; "
                    + "SET idle_in_transaction_session_timeout = '15s'; SET client_min_messages = warning")
    }

    deinit { close() }

    func close() {
        if let c = conn { PQfinish(c) }
        conn = nil
    }

    var isOpen: Bool { conn.map { PQstatus($0) == CONNECTION_OK } ?? false }

    /// The socket, for waiting on notifications.
    var socket: Int32 { conn.map { PQsocket($0) } ?? -1 }

    /// Runs one or more statements without parameters; returns the last one's rows (text format).
    @discardableResult
    func execute(_ sql: String) throws(PostgresError) -> Rows {
        guard let c = conn else { throw PostgresError(kind: .connection, message: "connection closed") }
        return try collect(PQexec(c, sql), c)
    }

    /// Runs one statement with parameters; rows come back in binary format.
    @discardableResult
    func query(_ sql: String, _ parameters: [Parameter] = []) throws(PostgresError) -> Rows {
        guard let c = conn else { throw PostgresError(kind: .connection, message: "connection closed") }
        let key = PreparedKey(sql: sql, parameters: parameters)
        if prepared[key] == nil {
            let name = "zonertc_\(prepared.count + 1)"
            let made = withParameters(parameters) { types, _, _, _ in
                PQprepare(c, name, sql, Int32(parameters.count), types)
            }
            _ = try collect(made, c)
            prepared[key] = name
        }
        let name = prepared[key]!
        let result = withParameters(parameters) { _, values, lengths, formats in
            PQexecPrepared(c, name, Int32(parameters.count), values, lengths, formats, 1)
        }
        return try collect(result, c)
    }

    /// A statement text with its parameters' types: what one server-side prepared statement runs.
    private struct PreparedKey: Hashable {
        var sql: String
        var types: [UInt32]

        init(sql: String, parameters: [Parameter]) {
            self.sql = sql
            types = parameters.map(\.typeOID)
        }
    }

    /// Runs several statements in one round trip (`run(_:)`); throws the first failure. Rows
    /// come back in binary format.
    @discardableResult
    func pipeline(_ statements: [(sql: String, parameters: [Parameter])]) throws(PostgresError) -> [Rows] {
        let outcome = try run(statements)
        if let failure = outcome.failure { throw failure }
        return outcome.results
    }

    /// What a pipeline ran: the results of the statements before the first failure, in order,
    /// and that failure (nil: every statement ran). A statement that committed before the failure
    /// stays committed, so a caller may need to know it did.
    struct PipelineOutcome {
        var results: [Rows]
        var failure: PostgresError?
    }

    /// Runs several statements in one round trip (libpq pipeline mode): all are sent, then every
    /// result is read. The server runs them in order, each with its own snapshot; after one fails
    /// the rest do not run (and a transaction it was in stays open, aborted: the caller ends it).
    /// The failure comes back with the results before it; throws only when the connection fails
    /// before every result is read. Rows come back in binary format.
    func run(_ statements: [(sql: String, parameters: [Parameter])]) throws(PostgresError) -> PipelineOutcome {
        guard let c = conn else { throw PostgresError(kind: .connection, message: "connection closed") }
        guard PQenterPipelineMode(c) == 1 else {
            throw PostgresError(kind: .connection, message: String(cString: PQerrorMessage(c)).trimmed)
        }
        defer { _ = PQexitPipelineMode(c) }
        // A statement this session has not prepared is prepared in the same round trip, just
        // before it runs; its name is kept only once the server has answered the prepare.
        var preparing: [(index: Int, key: PreparedKey, name: String)] = []
        for (index, (sql, parameters)) in statements.enumerated() {
            let key = PreparedKey(sql: sql, parameters: parameters)
            let name: String
            if let known = prepared[key] { name = known } else if let queued = preparing.first(where: { $0.key == key }) {
                name = queued.name
            } else {
                name = "zonertc_\(prepared.count + preparing.count + 1)"
                let made = withParameters(parameters) { types, _, _, _ in
                    PQsendPrepare(c, name, sql, Int32(parameters.count), types)
                }
                guard made == 1 else {
                    throw PostgresError(kind: .connection, message: String(cString: PQerrorMessage(c)).trimmed)
                }
                preparing.append((index, key, name))
            }
            let sent = withParameters(parameters) { _, values, lengths, formats in
                PQsendQueryPrepared(c, name, Int32(parameters.count), values, lengths, formats, 1)
            }
            guard sent == 1 else {
                throw PostgresError(kind: .connection, message: String(cString: PQerrorMessage(c)).trimmed)
            }
        }
        guard PQpipelineSync(c) == 1 else {
            throw PostgresError(kind: .connection, message: String(cString: PQerrorMessage(c)).trimmed)
        }
        var rows: [Rows] = []
        var failure: PostgresError?
        var nextPrepare = 0
        for index in statements.indices {
            if nextPrepare < preparing.count, preparing[nextPrepare].index == index {
                // The prepare's own result, then its NULL.
                guard let result = PQgetResult(c) else {
                    throw PostgresError(kind: .connection, message: String(cString: PQerrorMessage(c)).trimmed)
                }
                if PQresultStatus(result) == PGRES_PIPELINE_ABORTED {
                    PQclear(result)
                } else {
                    do throws(PostgresError) {
                        _ = try collect(result, c)
                        prepared[preparing[nextPrepare].key] = preparing[nextPrepare].name
                    } catch {
                        if failure == nil { failure = error }
                    }
                }
                while let extra = PQgetResult(c) { PQclear(extra) }
                nextPrepare += 1
            }
            // Each statement's result, then a NULL that ends it. A NULL first: the connection failed.
            guard let result = PQgetResult(c) else {
                throw PostgresError(kind: .connection, message: String(cString: PQerrorMessage(c)).trimmed)
            }
            if PQresultStatus(result) == PGRES_PIPELINE_ABORTED {
                PQclear(result)
            } else {
                do throws(PostgresError) { rows.append(try collect(result, c)) } catch {
                    if failure == nil { failure = error }
                }
            }
            while let extra = PQgetResult(c) { PQclear(extra) }
        }
        // The sync point's own result closes the pipeline.
        while let result = PQgetResult(c) {
            let status = PQresultStatus(result)
            PQclear(result)
            if status == PGRES_PIPELINE_SYNC { break }
        }
        return PipelineOutcome(results: rows, failure: failure)
    }

    /// Hands `parameters` to `body` as libpq wants them: types, values, lengths, all in binary.
    private func withParameters<R>(
        _ parameters: [Parameter],
        _ body: ([UInt32], [UnsafePointer<CChar>?], [Int32], [Int32]) -> R
    ) -> R {
        var types: [UInt32] = []
        var buffers: [[UInt8]] = []
        for p in parameters {
            types.append(p.typeOID)
            switch p {
            case .int8(let v):
                let bits = UInt64(bitPattern: v)
                buffers.append((0..<8).reversed().map { UInt8(truncatingIfNeeded: bits >> (8 * UInt64($0))) })
            case .text(let s):
                buffers.append(Array(s.utf8))
            case .bytea(let b):
                buffers.append(b)
            }
        }
        let lengths = buffers.map { Int32(clamping: $0.count) }
        let formats = [Int32](repeating: 1, count: buffers.count)
        // libpq copies parameters before returning, so pointers into these arrays suffice: an asset's
        // bytes (up to 50 MB) are not copied once more to be handed over.
        var values: [UnsafePointer<CChar>?] = []
        values.reserveCapacity(buffers.count)
        return Self.withPointers(to: buffers[...], collecting: &values) { body(types, $0, lengths, formats) }
    }

    /// Calls `body` with a pointer to each buffer, valid during the call (nested, one buffer a level:
    /// a statement has a handful of parameters). An empty buffer gets a pointer to an empty string,
    /// never nil, which libpq would read as SQL NULL.
    private static func withPointers<R>(to buffers: ArraySlice<[UInt8]>, collecting values: inout [UnsafePointer<CChar>?],
                                        _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
        guard let first = buffers.first else { return body(values) }
        return first.withUnsafeBufferPointer { bytes in
            let empty: StaticString = ""
            let base = UnsafeRawPointer(bytes.baseAddress.map { UnsafeRawPointer($0) } ?? UnsafeRawPointer(empty.utf8Start))
            values.append(base.assumingMemoryBound(to: CChar.self))
            return withPointers(to: buffers.dropFirst(), collecting: &values, body)
        }
    }

    /// Notifications received so far, after reading what the socket holds. Throws if the connection is gone.
    func notifications() throws(PostgresError) -> [(channel: String, payload: String)] {
        guard let c = conn else { throw PostgresError(kind: .connection, message: "connection closed") }
        guard PQconsumeInput(c) == 1 else {
            throw PostgresError(kind: .connection, message: String(cString: PQerrorMessage(c)).trimmed)
        }
        var out: [(String, String)] = []
        while let n = PQnotifies(c) {
            out.append((String(cString: n.pointee.relname), String(cString: n.pointee.extra)))
            PQfreemem(n)
        }
        return out
    }

    private func collect(_ result: OpaquePointer?, _ c: OpaquePointer) throws(PostgresError) -> Rows {
        guard let result else {
            throw PostgresError(kind: .connection, message: String(cString: PQerrorMessage(c)).trimmed)
        }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            let message = String(cString: PQresultErrorMessage(result)).trimmed
            let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
            // A statement that failed because the server went away is a connection failure: the
            // server said so (57P, 08), or libpq did (no SQLSTATE: e.g. after an immediate shutdown
            // the socket is closed while PQstatus still says CONNECTION_OK).
            let serverSide = state.map { !$0.hasPrefix("57P") && !$0.hasPrefix("08") } ?? false
            let kind: PostgresError.Kind = PQstatus(c) == CONNECTION_OK && serverSide ? .statement : .connection
            throw PostgresError(kind: kind, message: message.isEmpty ? "\(status)" : message, sqlState: state)
        }
        var rows: [[[UInt8]?]] = []
        let n = PQntuples(result), f = PQnfields(result)
        rows.reserveCapacity(Int(n))
        for row in 0..<n {
            var columns: [[UInt8]?] = []
            for col in 0..<f {
                if PQgetisnull(result, row, col) == 1 { columns.append(nil); continue }
                let length = Int(PQgetlength(result, row, col))
                let base = PQgetvalue(result, row, col)!
                columns.append(base.withMemoryRebound(to: UInt8.self, capacity: length) {
                    Array(UnsafeBufferPointer(start: $0, count: length))
                })
            }
            rows.append(columns)
        }
        return Rows(rows: rows)
    }
}

extension PostgresConnection.Rows {
    /// A binary int8 column.
    func int8(_ row: Int, _ column: Int) throws(PostgresError) -> Int64 {
        guard let b = rows[row][column], b.count == 8 else {
            throw PostgresError(kind: .statement, message: "column \(column) is not an int8")
        }
        return Int64(bitPattern: b.reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
    }

    /// A text column (either format).
    func text(_ row: Int, _ column: Int) -> String? {
        rows[row][column].map { String(decoding: $0, as: UTF8.self) }
    }
}

/// Runs `body` with a NULL-terminated array of C strings.
private func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
    let copies = strings.map { strdup($0) }
    defer { for c in copies { free(c) } }
    let pointers: [UnsafePointer<CChar>?] = copies.map { $0.map { UnsafePointer($0) } } + [nil]
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}

extension String {
    var trimmed: String { trimmingCharacters(in: .whitespacesAndNewlines) }
}
#endif
