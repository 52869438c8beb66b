import Foundation
import SQLKit

// The storage layer: one file per table family, each holding the family's typed rows, their conversion to the values
// the rules use, its column lists and every statement on its tables. The rules (`Service/`, `Operators/`, `Console/`,
// `Webhooks/`, `Maintenance/`) hold no SQL: they reach a table from the unit of work's handle, `db.payments`,
// `db.devices`, …, and call methods named by what they mean (`db.payments.markAuthorized(…)`).
//
// What a table method may do, and what it never does:
// - It takes and returns typed values (`PaymentInfo`, `DeviceInfo`, …), never rows or SQL fragments.
// - It never throws an API error or a refusal, never audits, never emits a webhook and never reads the clock: the time is
//   passed in. Deciding what a missing or changed row means is the rules' work.
// - A lookup made for a customer takes the customer's id (`db.devices.find(id, account:)`), so a handler cannot reach
//   another customer's object by its id alone.
// - Transactions stay with the rules (`commit { db in … }`); a table method runs in the unit of work it is given.
// - A statement run on every sign-in or payment is a `FixedSQL` (no builder serialized per call) and is listed in its
//   table's `hotStatements`, which `QueryPlanTests` checks for index use.

/// A table family's handle in one unit of work: the statements of its tables, run on `db`.
protocol Table: Sendable {
    /// The unit of work's database handle.
    var db: any SQLDatabase { get }
}

/// JSON kept in a TEXT column (a receipt, an idempotent response): sorted keys, dates as milliseconds since 1970.
enum StoredJSON {
    /// `value` as the text stored.
    static func encode(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .millisecondsSince1970
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// The value stored as `text`.
    static func decode<T: Decodable>(_ type: T.Type, _ text: String) throws -> T {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        return try decoder.decode(type, from: Data(text.utf8))
    }
}

extension Date {
    /// A stored time (milliseconds since 1970), when there is one.
    init?(storedMilliseconds value: Int64?) {
        guard let value else { return nil }
        self.init(millisecondsSince1970: value)
    }
}

/// A stored row that does not convert to its value: a state or key the code does not know. The database was changed
/// behind the server's back; the rules answer `internal_error`.
struct UnreadableRow: Error, CustomStringConvertible {
    let table: String
    let column: String
    var description: String { "\(table).\(column) holds a value this server cannot read" }
}

/// What a `LIKE` pattern needs so that what someone typed is matched literally (with `ESCAPE '\'`).
func likeEscaped(_ text: String) -> String {
    text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_")
}

/// Every statement the tables run on each sign-in, payment, refresh or authenticated request, with sample values, by
/// table family. `QueryPlanTests` checks each against the engine's plan, so a hot statement added to a table's list is
/// checked without a new test.
enum HotStatements {
    static var all: [(family: String, statement: FixedStatement)] {
        let families: [(String, [FixedStatement])] = [
            ("payments", PaymentsTable.hotStatements), ("idempotency_keys", IdempotencyKeysTable.hotStatements),
            ("devices", DevicesTable.hotStatements), ("sessions", SessionsTable.hotStatements), ("challenges", ChallengesTable.hotStatements),
            ("audit_events", AuditEventsTable.hotStatements), ("payees", PayeesTable.hotStatements),
            ("accounts", AccountsTable.hotStatements),
        ]
        return families.flatMap { family in family.1.map { (family.0, $0) } }
    }

    /// The same on PostgreSQL: the statements that are PostgreSQL's own in place of SQLite's.
    static var postgres: [(family: String, statement: FixedStatement)] {
        all.filter { $0.family != "audit_events" } + AuditEventsTable.postgresHotStatements.map { ("audit_events", $0) }
            + SessionsTable.postgresHotStatements.map { ("sessions", $0) }
    }
}
