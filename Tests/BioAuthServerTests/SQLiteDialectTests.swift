import Logging
import SQLKit
import SQLiteKit
import Testing

@testable import BioAuthServer

@Suite("SQLite dialect")
struct SQLiteDialectTests {
    /// Serializes with a dialect, without a database behind it.
    struct Renderer: SQLDatabase {
        let dialect: any SQLDialect
        var logger: Logger { Logger(label: "render") }
        var eventLoop: any EventLoop { MultiThreadedEventLoopGroup.singleton.any() }
        func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) -> EventLoopFuture<Void> {
            eventLoop.makeSucceededVoidFuture()
        }
        func render(_ build: (any SQLDatabase) -> any SQLExpression) -> String {
            var serializer = SQLSerializer(database: self)
            build(self).serialize(to: &serializer)
            return serializer.sql
        }
    }

    @Test("the server's statements come out exactly as with SQLiteKit's dialect: only the escaping of identifiers is skipped")
    func sameSQL() {
        let ours = Renderer(dialect: LiteralIdentifiersSQLiteDialect.shared)
        let sqliteKit = Renderer(dialect: SQLiteDialect())
        let statements: [(any SQLDatabase) -> any SQLExpression] = [
            { $0.select().columns("id", "account_id", "revoked_at").from("devices").where("key_id", .equal, "k").limit(1).select },
            { $0.insert(into: "challenges").columns("id", "purpose").values(SQLBind("a"), SQLBind(Int64?.none)).insert },
            { $0.update("devices").set("counter", to: 7).where("id", .equal, "d").where("revoked_at", .is, SQLLiteral.null).update },
            { $0.delete(from: "access_tokens").where("session_id", .equal, "s").delete },
            {
                $0.select().column(
                    SQLFunction("COALESCE", args: SQLFunction("MAX", args: SQLColumn("sequence")), SQLLiteral.numeric("0")),
                    as: "last"
                ).from("audit_events").select
            },
            {
                $0.select().column("id").from("sessions").where { $0.where("installation_id", .equal, "i").orWhere("device_id", .equal, "d") }
                    .orderBy("created_at", .descending).select
            },
        ]
        for statement in statements {
            #expect(ours.render(statement) == sqliteKit.render(statement))
        }
        #expect(ours.render { $0.select().column("id").from("devices").select } == #"SELECT "id" FROM "devices""#)
    }
}
