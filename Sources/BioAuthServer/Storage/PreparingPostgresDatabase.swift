import Logging
import NIOCore
import PostgresKit
import SQLKit

/// One leased PostgreSQL connection as an `SQLDatabase`, which runs each ``FixedStatement`` as a named prepared
/// statement: PostgreSQL parses and plans it the first time this connection runs it, and then only binds and executes.
/// Every other expression (SQLKit's builders, raw SQL) goes through PostgresKit as sent, parsed and planned each time.
///
/// Every statement sent, prepared or not, is reported to ``UnitOfWorkEvents`` (`bioauth_database_statements_total`).
///
/// The values are bound as PostgresKit would bind them (the same PostgreSQL types), so a statement means the same
/// prepared or not. A statement with a value of another type (none of the hot ones) runs unprepared.
struct PreparingPostgresDatabase: SQLDatabase {
    private let connection: PostgresConnection
    private let base: any SQLDatabase

    init(_ connection: PostgresConnection) {
        self.connection = connection
        self.base = connection.sql(queryLogLevel: nil)
    }

    var logger: Logger { base.logger }
    var eventLoop: any EventLoop { base.eventLoop }
    var version: (any SQLDatabaseReportedVersion)? { base.version }
    var dialect: any SQLDialect { base.dialect }
    var queryLogLevel: Logger.Level? { nil }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) -> EventLoopFuture<Void> {
        UnitOfWorkEvents.current?.statementSent()
        return base.execute(sql: query, onRow)
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        UnitOfWorkEvents.current?.statementSent()
        guard let statement = query as? FixedStatement, let bindings = statement.postgresBindings() else {
            return try await base.execute(sql: query, onRow)
        }
        try await PreparedFixedStatement.$running.withValue(statement.sql) {
            for try await row in try await connection.execute(PreparedFixedStatement(bindings: bindings), logger: logger) {
                onRow(row.sql())
            }
        }
    }

    func withSession<R>(_ closure: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await closure(self)
    }
}

/// A ``FixedSQL`` as PostgresNIO's prepared statement.
///
/// PostgresNIO names a prepared statement, and reads its text, from the statement's type; ours are values, so this one
/// type stands for all of them and reads which one it is from ``running``, which
/// ``PreparingPostgresDatabase/execute(sql:_:)`` binds around the call. PostgresNIO reads both on the calling task, before
/// the statement is sent. Outside that scope the name is one no statement has and its text fails when run, so nothing
/// could run under another statement's name or pass unnoticed.
struct PreparedFixedStatement: PostgresPreparedStatement {
    /// The statement being run on this task.
    @TaskLocal static var running: FixedSQL?

    static var name: String { running?.preparedName ?? "bioauth_unbound" }
    static var sql: String { running?.postgresText ?? "SELECT CAST('a prepared statement was run outside its scope' AS INTEGER) AS unbound" }

    let bindings: PostgresBindings

    func makeBindings() throws -> PostgresBindings { bindings }
    func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }
}

extension FixedStatement {
    /// The values as PostgresKit binds them (by their `PostgresEncodable` conformance), but a `nil` as a `NULL` of its
    /// type, or nil when one needs PostgresKit's general encoding. A statement is prepared with the types of the values
    /// of its first call, so that a call with a `nil` later binds the same type (an untyped `NULL` first would leave
    /// PostgreSQL to choose).
    func postgresBindings() -> PostgresBindings? {
        var bindings = PostgresBindings(capacity: binds.count)
        for bind in binds {
            if let optional = bind as? any OptionalBind, optional.isNone {
                // A NULL of the value's type: the statement is prepared with the types of its first call's values.
                guard let type = optional.wrappedType else { return nil }
                bindings.append(PostgresData(type: type, value: nil))
            } else if let value = bind as? any PostgresThrowingDynamicTypeEncodable {
                guard (try? bindings.append(value)) != nil else { return nil }
            } else {
                return nil
            }
        }
        return bindings
    }
}

/// An optional value, to bind a `nil` with its type.
private protocol OptionalBind {
    var isNone: Bool { get }
    /// The PostgreSQL type of the wrapped type, when PostgresNIO encodes it.
    var wrappedType: PostgresDataType? { get }
}

extension Optional: OptionalBind {
    fileprivate var isNone: Bool { self == nil }
    fileprivate var wrappedType: PostgresDataType? { (Wrapped.self as? any PostgresEncodable.Type)?.psqlType }
}
