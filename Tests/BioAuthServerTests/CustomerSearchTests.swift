import BioAuthCore
import Foundation
import SQLKit
import Testing

@testable import BioAuthServer

/// Support finds a customer the way the customer describes themself: a capitalised name, the start of it, or any id
/// their app shows. Each lookup reads one index, on SQLite and on PostgreSQL.
@Suite("Customer search")
struct CustomerSearchTests {
    @Test(
        "the start of a username in any case, and every id a customer reads out, finds the customer",
        arguments: StorageBackend.available
    )
    func finds(backend: StorageBackend) async throws {
        try await TestServer.run(backend: backend) { api in
            let (tokens, deviceID) = try await api.enrolled(TestKey(), username: "carol.li")
            for name in ["carol.lin", "carolyn", "bob"] { try await api.createAccount(name) }
            let paymentID = try #require(try await api.createPayment(token: tokens.access)["paymentId"])
            let desk = SupportDesk(service: api.service)
            let record = try await desk.customer("Carol.Li")
            #expect(record.username == "carol.li", "the customer page takes the name as the customer says it")
            let sessionID = try #require(record.sessions.first?.id)

            let exact = try await desk.search("Carol.Li")
            guard case .usernames(let matches) = exact else {
                Issue.record("no usernames")
                return
            }
            #expect(matches.first == .init(accountID: record.accountID, username: "carol.li") && exact.usernames == ["carol.li", "carol.lin"])
            #expect(try await desk.search("CAROL").usernames == ["carol.li", "carol.lin", "carolyn"], "by username")
            #expect(try await desk.search("carol", limit: 2).usernames == ["carol.li", "carol.lin"], "at most the limit")
            #expect(try await desk.search("zz") == .usernames([]))
            #expect(try await desk.search("carol%") == .usernames([]), "no pattern characters")
            for (kind, id) in [("account", record.accountID), ("device", deviceID), ("payment", paymentID), ("session", sessionID)] {
                #expect(try await desk.search(" \(id.uppercased()) ") == .id(kind: kind, id: id, accountID: record.accountID), "\(kind)")
            }
            #expect(try await desk.search(UUID().uuidString) == .usernames([]), "an id no one holds")
            await #expect(throws: SupportError.self) { try await desk.search(String(repeating: "a", count: 65)) }
        }
    }

    /// The plan `backend` makes for the prefix search over `count` accounts, one line per step.
    static func prefixPlan(_ api: API, count: Int) async throws -> [String] {
        let postgres = api.database.dialect == .postgres
        return try await api.database.transaction { db in
            let rows: SQLQueryString =
                postgres
                ? "SELECT 'acc-' || g, 'user' || g, 'x', 0, 0, 0 FROM generate_series(1, \(literal: count)) g"
                : "WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < \(literal: count)) SELECT 'acc-' || n, 'user' || n, 'x', 0, 0, 0 FROM g"
            try await db.raw(
                "INSERT INTO accounts (id, username, password_hash, failed_password_attempts, created_at, password_changed_at) \(rows)"
            ).run()
            try await db.raw("ANALYZE").run()
            let search = AccountsTable.prefixSearch("user12", limit: 20, engine: api.database.dialect)
            let explained = FixedStatement(sql: FixedSQL((postgres ? "EXPLAIN " : "EXPLAIN QUERY PLAN ") + search.sql.text), binds: search.binds)
            return try await db.all(explained).map { row in
                try row.decode(column: postgres ? "QUERY PLAN" : "detail", as: String.self)
            }
        }
    }

    @Test("the prefix search reads a range of an index on both engines, not the accounts table", arguments: StorageBackend.available)
    func plans(backend: StorageBackend) async throws {
        try await TestServer.run(backend: backend) { api in
            let plan = try await Self.prefixPlan(api, count: 20_000)
            if backend == .postgres {
                #expect(plan.contains { $0.contains("Index") && $0.contains("accounts_by_username_bytes") }, "\(plan)")
                #expect(!plan.contains { $0.contains("Seq Scan") }, "\(plan)")
            } else {
                #expect(plan.count == 1 && plan[0].hasPrefix("SEARCH accounts USING") && plan[0].contains("(username>? AND username<?)"), "\(plan)")
            }
            let found = try await api.database.transaction { db in
                try await db.accounts.withUsernamePrefix("user1999", limit: 20, engine: api.database.dialect).map(\.username)
            }
            #expect(found == ["user1999"] + (0...9).map { "user1999\($0)" })
        }
    }
}

extension SupportDesk.CustomerSearch {
    /// The usernames found, nil for an id.
    fileprivate var usernames: [String]? {
        guard case .usernames(let matches) = self else { return nil }
        return matches.map(\.username)
    }
}
