import Crypto
import NIOConcurrencyHelpers
import SQLKit

/// The SQL text of a statement the server runs on every sign-in or payment, written once in code with `?` for each
/// bound value; only the values change from call to call.
///
/// SQLKit's builders build and serialize a tree of expressions for every call, which on the bench's profile was
/// about an eighth of the database thread's time. SQLite runs a ``FixedStatement`` with this text as it is. PostgreSQL
/// runs it as a named prepared statement (``PreparingPostgresDatabase``), with the placeholders numbered (`$1`, `$2`,
/// …): parsed and planned once per connection, where a statement sent with its text is parsed and planned on every call
/// (about 40 % of PostgreSQL's CPU per sign-in before). The text must suit both engines, name identifiers in lower case
/// without quotes, and have no `?` other than placeholders.
struct FixedSQL: Sendable {
    /// The text as written, with `?` placeholders (SQLite's own form).
    let text: String
    /// The text with PostgreSQL's numbered placeholders.
    let postgresText: String
    /// The name of the prepared statement on PostgreSQL: from a hash of the text, so that a text built again (the few
    /// statements whose conditions vary) is the same statement, prepared once per connection.
    let preparedName: String
    /// The text between the placeholders: one more piece than there are placeholders.
    private let pieces: [String]

    init(_ text: String) {
        self.text = text
        let pieces = text.split(separator: "?", omittingEmptySubsequences: false).map(String.init)
        self.pieces = pieces
        var numbered = pieces[0]
        for (index, piece) in pieces.dropFirst().enumerated() { numbered += "$\(index + 1)" + piece }
        self.postgresText = numbered
        let digits = Array("0123456789abcdef")
        self.preparedName =
            "bioauth_" + String(SHA256.hash(data: Array(text.utf8)).prefix(12).flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] })
    }

    /// How many values the statement binds.
    var placeholderCount: Int { pieces.count - 1 }

    /// The statement with `binds` for its placeholders, in order.
    func callAsFunction(_ binds: any Encodable & Sendable...) -> FixedStatement { FixedStatement(sql: self, binds: binds) }

    /// Writes the text with the dialect's placeholders; the values go to the serializer's binds.
    fileprivate func serialize(_ binds: [any Encodable & Sendable], to serializer: inout SQLSerializer) {
        for (index, piece) in pieces.enumerated() {
            serializer.write(piece)
            if index < binds.count && index < placeholderCount { serializer.write(bind: binds[index]) }
        }
    }
}

/// A ``FixedSQL`` with its values: an `SQLExpression`, so any `SQLDatabase` can run it.
struct FixedStatement: SQLExpression {
    let sql: FixedSQL
    let binds: [any Encodable & Sendable]

    /// Thrown before anything runs when the values do not match the placeholders (a mistake in our code).
    struct BindCountMismatch: Error, CustomStringConvertible {
        let expected: Int, got: Int, sql: String
        var description: String { "\(got) values for \(expected) placeholders in: \(sql)" }
    }

    /// Refuses a statement whose values do not match its placeholders.
    func checked() throws -> FixedStatement {
        guard binds.count == sql.placeholderCount else {
            throw BindCountMismatch(expected: sql.placeholderCount, got: binds.count, sql: sql.text)
        }
        return self
    }

    func serialize(to serializer: inout SQLSerializer) { sql.serialize(binds, to: &serializer) }
}

extension SQLDatabase {
    /// Runs `statement`, ignoring any rows.
    func run(_ statement: FixedStatement) async throws {
        try await execute(sql: statement.checked()) { _ in }
    }

    /// The first row `statement` returns, if any.
    func first(_ statement: FixedStatement) async throws -> (any SQLRow)? {
        try await all(statement).first
    }

    /// Every row `statement` returns.
    func all(_ statement: FixedStatement) async throws -> [any SQLRow] {
        let rows = NIOLockedValueBox<[any SQLRow]>([])
        try await execute(sql: statement.checked()) { row in rows.withLockedValue { $0.append(row) } }
        return rows.withLockedValue { $0 }
    }
}
