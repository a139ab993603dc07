#if PostgreSQL
@testable import PostgresStore
import Testing
import TestSupport

/// `PostgresConnection` prepares each statement once per session and runs it by name: a statement
/// the server refused, or never reached because an earlier one in the pipeline failed, is not
/// remembered as prepared, so the next call prepares it again rather than naming nothing.
@Suite("PostgreSQL: statements prepared once per connection", .serialized,
       .enabled(if: PostgresCluster.runnable, "PostgreSQL is not installed (ZONERTC_CI=1 fails instead)"))
struct PostgresPreparedStatementTests {
    private func preparedCount(_ c: PostgresConnection) throws -> Int64 {
        // Simple protocol: this query itself is not a prepared statement.
        let text = try c.execute("SELECT count(*) FROM pg_prepared_statements").text(0, 0)
        return Int64(text ?? "") ?? -1
    }

    @Test("a statement run again, alone or in a pipeline, is prepared once")
    func preparedOnce() throws {
        let cluster = try PostgresCluster.shared()
        let c = try PostgresConnection(url: cluster.url(schema: try cluster.freshSchema()))
        defer { c.close() }
        for i in 0..<3 {
            #expect(try c.query("SELECT $1::bigint + 1", [.int8(Int64(i))]).int8(0, 0) == Int64(i) + 1)
        }
        #expect(try preparedCount(c) == 1)
        for i in 0..<3 {
            let results = try c.pipeline([("BEGIN", []), ("SELECT $1::bigint + 1", [.int8(Int64(i))]),
                                          ("SELECT $1::bigint + 1", [.int8(7)]), ("COMMIT", [])])
            #expect(try results[1].int8(0, 0) == Int64(i) + 1)
            #expect(try results[2].int8(0, 0) == 8)
        }
        // BEGIN and COMMIT joined the first; the repeated statement is one.
        #expect(try preparedCount(c) == 3)
        // The same text with another parameter type is another statement.
        #expect(try c.query("SELECT $1::text", [.text("x")]).text(0, 0) == "x")
        #expect(try preparedCount(c) == 4)
    }

    @Test("statements after a failure in a pipeline, or refused by the server, are prepared on their next use")
    func failuresAreNotRemembered() throws {
        let cluster = try PostgresCluster.shared()
        let c = try PostgresConnection(url: cluster.url(schema: try cluster.freshSchema()))
        defer { c.close() }
        #expect(throws: PostgresError.self) {
            try c.pipeline([("SELECT 1 / $1::bigint", [.int8(0)]), ("SELECT $1::bigint * 3", [.int8(2)])])
        }
        // The division was prepared (it failed only when run); the product never reached the server.
        #expect(try preparedCount(c) == 1)
        #expect(try c.pipeline([("SELECT $1::bigint * 3", [.int8(2)])])[0].int8(0, 0) == 6)
        #expect(try c.query("SELECT 1 / $1::bigint", [.int8(1)]).int8(0, 0) == 1)
        #expect(try preparedCount(c) == 2)

        let refused = #expect(throws: PostgresError.self) { try c.query("SELEC $1::bigint", [.int8(1)]) }
        #expect(refused?.kind == .statement)
        let refusedInPipeline = #expect(throws: PostgresError.self) {
            try c.pipeline([("SELEC $1::bigint", [.int8(1)]), ("SELECT $1::bigint * 5", [.int8(1)])])
        }
        #expect(refusedInPipeline?.kind == .statement)
        #expect(try preparedCount(c) == 2)
        #expect(try c.pipeline([("SELECT $1::bigint * 5", [.int8(1)])])[0].int8(0, 0) == 5)
        #expect(try preparedCount(c) == 3)
    }
}
#endif
