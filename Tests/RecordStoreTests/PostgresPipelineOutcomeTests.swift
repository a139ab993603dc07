#if PostgreSQL
@testable import PostgresStore
import Testing
import TestSupport

/// `PostgresConnection.run` returns what a pipeline ran before it failed along with the failure:
/// a transaction committed earlier in the pipeline stays committed, and its caller must be able
/// to tell (the flusher's durable mark is such a transaction).
@Suite("PostgreSQL: a pipeline's results before its failure", .serialized,
       .enabled(if: PostgresCluster.runnable, "PostgreSQL is not installed (ZONERTC_CI=1 fails instead)"))
struct PostgresPipelineOutcomeTests {
    @Test("a statement failing after a COMMIT: the three results before it, the failure, the row committed")
    func failureAfterCommit() throws {
        let cluster = try PostgresCluster.shared()
        let schema = try cluster.freshSchema()
        let c = try PostgresConnection(url: cluster.url(schema: schema))
        defer { c.close() }
        try c.execute("CREATE TABLE kept (n bigint)")
        let outcome = try c.run([("BEGIN", []), ("INSERT INTO kept VALUES ($1) RETURNING n", [.int8(42)]),
                                 ("COMMIT", []), ("SELECT 1 / $1::bigint", [.int8(0)]),
                                 ("SELECT $1::bigint + 1", [.int8(1)])])
        #expect(outcome.results.count == 3)
        #expect(outcome.results.count == 3 ? try outcome.results[1].int8(0, 0) == 42 : false)
        #expect(outcome.failure?.kind == .statement)
        #expect(outcome.failure?.sqlState == "22012",
                "not the division's error: \(String(describing: outcome.failure))")
        // Another session sees the committed row.
        #expect(try cluster.sql("SELECT n FROM \(schema).kept") == "42")
        // The session is usable: the failure was outside a transaction block.
        #expect(try c.query("SELECT $1::bigint + 1", [.int8(1)]).int8(0, 0) == 2)
        #expect(try c.pipeline([("SELECT count(*) FROM kept", [])]).first?.int8(0, 0) == 1)

        // `pipeline` throws the same failure.
        let thrown = #expect(throws: PostgresError.self) {
            try c.pipeline([("SELECT $1::bigint", [.int8(3)]), ("SELECT 1 / $1::bigint", [.int8(0)])])
        }
        #expect(thrown?.sqlState == "22012")
    }

    @Test("a statement failing inside a transaction: nothing of it committed, the session usable after ROLLBACK")
    func failureInsideTransaction() throws {
        let cluster = try PostgresCluster.shared()
        let schema = try cluster.freshSchema()
        let c = try PostgresConnection(url: cluster.url(schema: schema))
        defer { c.close() }
        try c.execute("CREATE TABLE kept (n bigint)")
        let outcome = try c.run([("BEGIN", []), ("INSERT INTO kept VALUES ($1)", [.int8(7)]),
                                 ("SELECT 1 / $1::bigint", [.int8(0)]), ("COMMIT", [])])
        #expect(outcome.results.count == 2)
        #expect(outcome.failure?.sqlState == "22012")
        // The transaction is left open and aborted: the caller ends it.
        let aborted = #expect(throws: PostgresError.self) { try c.query("SELECT $1::bigint", [.int8(1)]) }
        #expect(aborted?.sqlState == "25P02")
        try c.execute("ROLLBACK")
        #expect(try c.query("SELECT $1::bigint", [.int8(1)]).int8(0, 0) == 1)
        #expect(try cluster.sql("SELECT count(*) FROM \(schema).kept") == "0")
    }
}
#endif
