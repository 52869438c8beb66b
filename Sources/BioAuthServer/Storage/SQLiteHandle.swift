import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import SQLKit
import SQLiteKit
// The SQLite library sqlite-nio builds and links (its C module). BioAuth calls it directly so that a statement
// runs on the thread that asks for it, instead of a round trip to a thread pool and back per statement.
import VaporCSQLite

/// One SQLite connection driven synchronously through the C API, with a cache of prepared statements.
///
/// Each call runs to completion on the calling thread while holding the handle's mutex; the caller
/// (``SQLiteDatabaseExecutor``) decides who may call and when, and keeps slow calls (those that may wait for the
/// disk or for another process's lock) off the concurrency pool's threads.
final class SQLiteHandle: @unchecked Sendable {
    // Guarded by `mutex`: the connection, the statement cache and the current unit of work.
    private var connection: OpaquePointer?
    private var statements: [String: OpaquePointer] = [:]
    private var unit: UInt64 = 0
    private let mutex = NIOLock()

    /// Prepared statements kept at most; past this, statements are prepared for one use.
    static let statementCacheLimit = 128

    /// Opens (creating if needed) the database at `path`, or a private in-memory one for `":memory:"`. A new file is
    /// made readable by its owner only (0600); SQLite gives its `-wal` and `-shm` files the same mode.
    init(path: String) throws {
        _ = Self.initialized
        try Self.createOwnerOnly(path)
        var connection: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX | SQLITE_OPEN_EXRESCODE
        let status = sqlite_nio_sqlite3_open_v2(path, &connection, flags, nil)
        guard status == SQLITE_OK, let connection else {
            let error = SQLiteStorageError(
                status: status,
                message: connection.map { String(cString: sqlite_nio_sqlite3_errmsg($0)) } ?? "out of memory"
            )
            sqlite_nio_sqlite3_close_v2(connection)
            throw error
        }
        self.connection = connection
    }

    /// Creates the file at `path` empty with mode 0600 when there is none (SQLite would make it 0644 under the usual
    /// umask: customers' password hashes and the audit log readable by every user of the machine). An existing file
    /// keeps its mode (``SQLiteDatabaseExecutor`` warns when others may read it).
    static func createOwnerOnly(_ path: String) throws {
        guard path != ":memory:", !path.hasPrefix("file:"), !FileManager.default.fileExists(atPath: path) else { return }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        // Another process made it meanwhile: SQLite opens theirs.
        guard descriptor >= 0 else {
            if errno == EEXIST { return }
            throw SQLiteStorageError(status: SQLITE_CANTOPEN, message: "cannot create the database file \(path) (errno \(errno))")
        }
        try? FileHandle(fileDescriptor: descriptor).close()
    }

    /// Whether users other than the file's owner may read the file at `path`.
    static func othersMayRead(_ path: String) -> Bool {
        guard path != ":memory:", !path.hasPrefix("file:"),
            let mode = (try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? NSNumber
        else { return false }
        return mode.intValue & 0o044 != 0
    }

    /// SQLite's global initialization, once per process, before any connection is opened.
    private static let initialized: Void = { _ = sqlite_nio_sqlite3_initialize() }()

    deinit { closeLocked() }

    /// Whether the connection is outside any transaction (SQLite's autocommit mode).
    var isAutocommit: Bool {
        mutex.withLock { connection.map { sqlite_nio_sqlite3_get_autocommit($0) != 0 } ?? true }
    }

    /// Makes `unit` the only unit of work whose ``SQLiteUnitDatabase`` may run statements (0: none).
    func setUnit(_ unit: UInt64) { mutex.withLock { self.unit = unit } }

    /// Runs `sql` outside any unit's check (transaction control and set-up by the executor).
    func execute(_ sql: String) throws {
        try mutex.withLock { try run(sql, binds: [], onRow: nil) }
    }

    /// Runs one statement for `unit`, binding `binds` to its `?` placeholders and passing each result row to
    /// `onRow`. Refused when `unit` no longer holds the connection.
    func execute(_ sql: String, binds: [SQLiteData], unit: UInt64, onRow: ((SQLiteResultRow) -> Void)?) throws {
        try mutex.withLock {
            guard unit == self.unit else {
                throw SQLiteStorageError(status: SQLITE_MISUSE, message: "the database was used outside its unit of work")
            }
            try run(sql, binds: binds, onRow: onRow)
        }
    }

    /// How often each cached statement has run, and how often SQLite had to compile it again since it was
    /// prepared (a statement that is compiled again on every run costs as much as an uncached one).
    func statementStatistics() -> [String: (runs: Int, recompilations: Int)] {
        mutex.withLock {
            statements.mapValues { statement in
                (
                    Int(sqlite_nio_sqlite3_stmt_status(statement, SQLITE_STMTSTATUS_RUN, 0)),
                    Int(sqlite_nio_sqlite3_stmt_status(statement, SQLITE_STMTSTATUS_REPREPARE, 0))
                )
            }
        }
    }

    /// Finalizes every statement and closes the connection. Nothing may use the handle afterwards.
    func close() { mutex.withLock { closeLocked() } }

    // MARK: Internals (the mutex is held)

    private func closeLocked() {
        for statement in statements.values { sqlite_nio_sqlite3_finalize(statement) }
        statements = [:]
        if let connection { sqlite_nio_sqlite3_close_v2(connection) }
        connection = nil
    }

    private func run(_ sql: String, binds: [SQLiteData], onRow: ((SQLiteResultRow) -> Void)?) throws {
        guard let connection else { throw SQLiteStorageError(status: SQLITE_MISUSE, message: "the database is closed") }
        let (statement, cached) = try prepare(sql, on: connection)
        // A cached statement is reset but its bindings are not cleared: every run binds every parameter (checked
        // below), and clearing them marks a statement whose plan SQLite may tune to bound values (a join, for
        // example) as expired, so that it would be compiled again on every run.
        defer {
            if cached {
                sqlite_nio_sqlite3_reset(statement)
            } else {
                sqlite_nio_sqlite3_finalize(statement)
            }
        }
        let parameters = Int(sqlite_nio_sqlite3_bind_parameter_count(statement))
        guard binds.count == parameters else {
            throw SQLiteStorageError(status: SQLITE_RANGE, message: "the statement has \(parameters) parameters but \(binds.count) values were given")
        }
        for (index, value) in binds.enumerated() {
            let status = bind(value, at: Int32(index + 1), to: statement)
            guard status == SQLITE_OK else { throw error(status, on: connection) }
        }
        var columns: SQLiteResultColumns?
        while true {
            let status = sqlite_nio_sqlite3_step(statement)
            if status == SQLITE_DONE { return }
            guard status == SQLITE_ROW else { throw error(status, on: connection) }
            guard let onRow else { continue }
            let names = columns ?? SQLiteResultColumns(statement)
            columns = names
            onRow(SQLiteResultRow(columns: names, values: (0..<Int32(names.names.count)).map { Self.value(at: $0, of: statement) }))
        }
    }

    /// The cached statement for `sql`, or a fresh one (cached when there is room). One statement per call:
    /// text after the first statement is refused rather than silently ignored.
    private func prepare(_ sql: String, on connection: OpaquePointer) throws -> (OpaquePointer, cached: Bool) {
        if let statement = statements[sql] { return (statement, true) }
        let cache = statements.count < Self.statementCacheLimit
        var statement: OpaquePointer?
        var tail: UnsafePointer<CChar>?
        let status = sql.withCString { text in
            let status = sqlite_nio_sqlite3_prepare_v3(
                connection,
                text,
                -1,
                cache ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0,
                &statement,
                &tail
            )
            if status == SQLITE_OK, let tail, !String(cString: tail).allSatisfy({ $0.isWhitespace || $0 == ";" }) {
                return SQLITE_MISUSE
            }
            return status
        }
        guard status == SQLITE_OK, let statement else {
            if let statement { sqlite_nio_sqlite3_finalize(statement) }
            throw status == SQLITE_MISUSE && statement != nil
                ? SQLiteStorageError(status: status, message: "one statement per call") : error(status, on: connection)
        }
        if cache { statements[sql] = statement }
        return (statement, cache)
    }

    private func bind(_ value: SQLiteData, at index: Int32, to statement: OpaquePointer) -> Int32 {
        switch value {
        case .integer(let value): sqlite_nio_sqlite3_bind_int64(statement, index, Int64(value))
        case .float(let value): sqlite_nio_sqlite3_bind_double(statement, index, value)
        case .text(let value):
            sqlite_nio_sqlite3_bind_text64(statement, index, value, UInt64(value.utf8.count), transient, UInt8(SQLITE_UTF8))
        case .blob(let buffer):
            buffer.withUnsafeReadableBytes {
                sqlite_nio_sqlite3_bind_blob64(statement, index, $0.baseAddress, UInt64($0.count), transient)
            }
        case .null: sqlite_nio_sqlite3_bind_null(statement, index)
        }
    }

    private static func value(at column: Int32, of statement: OpaquePointer) -> SQLiteData {
        switch sqlite_nio_sqlite3_column_type(statement, column) {
        case SQLITE_INTEGER: return .integer(SQLiteInt64(sqlite_nio_sqlite3_column_int64(statement, column)))
        case SQLITE_FLOAT: return .float(sqlite_nio_sqlite3_column_double(statement, column))
        case SQLITE_TEXT:
            guard let text = sqlite_nio_sqlite3_column_text(statement, column) else { return .null }
            let count = Int(sqlite_nio_sqlite3_column_bytes(statement, column))
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            let count = Int(sqlite_nio_sqlite3_column_bytes(statement, column))
            var buffer = ByteBufferAllocator().buffer(capacity: count)
            if let bytes = sqlite_nio_sqlite3_column_blob(statement, column) {
                buffer.writeBytes(UnsafeRawBufferPointer(start: bytes, count: count))
            }
            return .blob(buffer)
        default: return .null
        }
    }

    private func error(_ status: Int32, on connection: OpaquePointer) -> SQLiteStorageError {
        SQLiteStorageError(status: status, message: String(cString: sqlite_nio_sqlite3_errmsg(connection)))
    }
}

/// SQLite's "copy the value now" destructor for bound text and blobs.
private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// A failure reported by SQLite: its (extended) result code and message. Messages name tables and
/// constraints, never bound values.
struct SQLiteStorageError: Error, CustomStringConvertible {
    var status: Int32
    var message: String
    var description: String { "SQLite error \(status): \(message)" }
}

/// The column names of a statement's result, shared by its rows.
final class SQLiteResultColumns: Sendable {
    let names: [String]
    let index: [String: Int]

    init(_ statement: OpaquePointer) {
        let names = (0..<sqlite_nio_sqlite3_column_count(statement)).map { column in
            sqlite_nio_sqlite3_column_name(statement, column).map { String(cString: $0) } ?? ""
        }
        self.names = names
        // The first column of a name wins, as in SQLite's own lookup.
        self.index = Dictionary(names.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
    }
}

/// One result row, read out of SQLite into values.
struct SQLiteResultRow: SQLRow {
    let columns: SQLiteResultColumns
    let values: [SQLiteData]

    var allColumns: [String] { columns.names }

    func contains(column: String) -> Bool { columns.index[column] != nil }

    func decodeNil(column: String) throws -> Bool {
        guard let index = columns.index[column] else { return true }
        return values[index] == .null
    }

    func decode<D: Decodable>(column: String, as type: D.Type) throws -> D {
        guard let index = columns.index[column] else {
            throw DecodingError.keyNotFound(
                SQLiteColumnKey(stringValue: column),
                .init(codingPath: [], debugDescription: "No column \(column) in the result.")
            )
        }
        return try Self.decode(values[index], as: D.self)
    }

    /// `value` as `D`: the column types BioAuth reads (text, integers and their optionals) directly, anything else
    /// (and every mismatch, for its error) through SQLiteKit's decoder.
    static func decode<D: Decodable>(_ value: SQLiteData, as type: D.Type) throws -> D {
        switch value {
        case .text(let text):
            if let text = text as? D { return text }  // String, and String? by the cast's wrapping
        case .integer(let integer):
            if D.self == Int64.self { return Int64(integer) as! D }
            if D.self == Int.self { return Int(integer) as! D }
            if D.self == Int64?.self { return Optional(Int64(integer)) as! D }
        case .null:
            if D.self == String?.self { return String?.none as! D }
            if D.self == Int64?.self { return Int64?.none as! D }
        default:
            break
        }
        return try sqliteDecoder.decode(D.self, from: value)
    }
}

private let sqliteDecoder = SQLiteDataDecoder()
private let sqliteEncoder = SQLiteDataEncoder()

private struct SQLiteColumnKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// The `SQLDatabase` a unit of work receives from ``SQLiteDatabaseExecutor``: every statement runs at once on
/// the calling thread. It works only while its unit of work holds the connection.
struct SQLiteUnitDatabase: SQLDatabase {
    let handle: SQLiteHandle
    let unit: UInt64
    let logger: Logger

    var eventLoop: any EventLoop { MultiThreadedEventLoopGroup.singleton.any() }
    var dialect: any SQLDialect { LiteralIdentifiersSQLiteDialect.shared }
    var queryLogLevel: Logger.Level? { nil }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) -> EventLoopFuture<Void> {
        do {
            try run(query, onRow)
            return eventLoop.makeSucceededVoidFuture()
        } catch {
            return eventLoop.makeFailedFuture(error)
        }
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        try run(query, onRow)
    }

    private func run(_ query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) throws {
        if let fixed = query as? FixedStatement {
            // Written in SQLite's own form already: nothing to serialize.
            try handle.execute(fixed.sql.text, binds: fixed.binds.map(Self.sqliteValue), unit: unit) { onRow($0) }
            return
        }
        var serializer = SQLSerializer(database: self)
        query.serialize(to: &serializer)
        let binds = try serializer.binds.map(Self.sqliteValue)
        try handle.execute(serializer.sql, binds: binds, unit: unit) { onRow($0) }
    }

    /// A bound value as SQLite stores it: strings and integers (also optional) directly, anything else through
    /// SQLiteKit's encoder.
    static func sqliteValue(_ bind: any Encodable & Sendable) throws -> SQLiteData {
        switch bind {
        case let text as String: .text(text)
        case let integer as Int64: .integer(SQLiteInt64(integer))
        case let integer as Int: .integer(SQLiteInt64(integer))
        default: try sqliteEncoder.encode(bind)
        }
    }
}

/// SQLite's dialect, except that identifiers are quoted without escaping quotes inside them.
///
/// SQLKit escapes every table and column name on every statement, and on the bench's profile that was the
/// largest part of the database thread's time. BioAuth's identifiers are all literals in its own code (lower
/// case letters and underscores), never input, so there is nothing to escape; a name from input must never
/// become an identifier (`SQLIdentifier`, `SQLColumn`, a table name) — bind it as a value instead.
struct LiteralIdentifiersSQLiteDialect: SQLDialect {
    static let shared = LiteralIdentifiersSQLiteDialect()
    private let base = SQLiteDialect()

    var name: String { base.name }
    var identifierQuote: any SQLExpression { DoubleQuote() }
    var literalStringQuote: any SQLExpression { base.literalStringQuote }
    func bindPlaceholder(at position: Int) -> any SQLExpression { base.bindPlaceholder(at: position) }
    func literalBoolean(_ value: Bool) -> any SQLExpression { base.literalBoolean(value) }
    var literalDefault: any SQLExpression { base.literalDefault }
    var supportsIfExists: Bool { base.supportsIfExists }
    var supportsDropBehavior: Bool { base.supportsDropBehavior }
    var supportsAutoIncrement: Bool { base.supportsAutoIncrement }
    var autoIncrementClause: any SQLExpression { base.autoIncrementClause }
    var enumSyntax: SQLEnumSyntax { base.enumSyntax }
    var triggerSyntax: SQLTriggerSyntax { base.triggerSyntax }
    var alterTableSyntax: SQLAlterTableSyntax { base.alterTableSyntax }
    var upsertSyntax: SQLUpsertSyntax { base.upsertSyntax }
    var supportsReturning: Bool { base.supportsReturning }
    var unionFeatures: SQLUnionFeatures { base.unionFeatures }
    func customDataType(for dataType: SQLDataType) -> (any SQLExpression)? { base.customDataType(for: dataType) }
    func nestedSubpathExpression(in column: any SQLExpression, for path: [String]) -> (any SQLExpression)? {
        base.nestedSubpathExpression(in: column, for: path)
    }

    /// `"`, as an expression SQLKit does not take apart (an `SQLRaw` quote makes it escape each identifier).
    private struct DoubleQuote: SQLExpression {
        func serialize(to serializer: inout SQLSerializer) { serializer.write("\"") }
    }
}
