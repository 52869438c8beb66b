import BioAuthCore
import Foundation
import SQLKit

extension SQLDatabase {
    /// `accounts`: customers, their password hashes, password locks and passkey user handles.
    var accounts: AccountsTable { AccountsTable(db: self) }
}

/// The statements on `accounts`.
struct AccountsTable: Table {
    let db: any SQLDatabase

    /// What a password check needs of an account.
    struct Credentials: Sendable {
        var id: String
        var passwordHash: String
        var failedAttempts: Int
        var lockedUntil: Date?
    }

    /// An account as support finds it.
    struct Summary: Sendable {
        var id: String
        var username: String
        var createdAt: Date
        var lockedUntil: Date?
    }

    /// Whether an account has this username.
    func exists(username: String) async throws -> Bool {
        try await id(username: username) != nil
    }

    /// Whether the account `id` exists.
    func exists(id: String) async throws -> Bool {
        try await db.select().column("id").from("accounts").where("id", .equal, id).first() != nil
    }

    /// The id of the account with this username.
    func id(username: String) async throws -> String? {
        try await db.select().column("id").from("accounts").where("username", .equal, username).first()?.decode(column: "id", as: String.self)
    }

    /// Stores a new account with no failed password and no lock.
    func insert(_ account: AccountInfo, passwordHash: String) async throws {
        try await db.insert(into: "accounts")
            .columns("id", "username", "password_hash", "failed_password_attempts", "locked_until", "created_at", "password_changed_at")
            .values(
                SQLBind(account.id),
                SQLBind(account.username),
                SQLBind(passwordHash),
                SQLBind(0),
                SQLBind(Int64?.none),
                SQLBind(account.createdAt.millisecondsSince1970),
                SQLBind(account.createdAt.millisecondsSince1970)
            )
            .run()
    }

    /// The credentials of the account with this username.
    func credentials(username: String) async throws -> Credentials? {
        try await selectCredentials().where("username", .equal, username).first().map(Self.credentials)
    }

    /// The credentials of the account `id`.
    func credentials(id: String) async throws -> Credentials? {
        try await selectCredentials().where("id", .equal, id).first().map(Self.credentials)
    }

    /// The account with this id or username, for support.
    func find(idOrUsername query: String) async throws -> Summary? {
        guard
            let row = try await db.select().columns("id", "username", "created_at", "locked_until").from("accounts")
                .where("id", .equal, query).orWhere("username", .equal, query).first()
        else { return nil }
        return Summary(
            id: try row.decode(column: "id", as: String.self),
            username: try row.decode(column: "username", as: String.self),
            createdAt: Date(millisecondsSince1970: try row.decode(column: "created_at", as: Int64.self)),
            lockedUntil: Date(storedMilliseconds: try row.decode(column: "locked_until", as: Int64?.self))
        )
    }

    /// Up to `limit` accounts whose username starts with `prefix` (usernames are stored lowercased, so give it lowercased),
    /// by username: a range of the username index (``prefixSearch(_:limit:engine:)``).
    func withUsernamePrefix(_ prefix: String, limit: Int, engine: DatabaseDialect) async throws -> [(id: String, username: String)] {
        try await db.all(Self.prefixSearch(prefix, limit: limit, engine: engine)).map {
            (try $0.decode(column: "id", as: String.self), try $0.decode(column: "username", as: String.self))
        }
    }

    /// The prefix search as a statement, for `QueryPlanTests`: a range from `prefix` to `prefix` and U+007F (above every
    /// byte a username may hold), compared byte by byte. PostgreSQL's default collation orders by language rules (it
    /// skips punctuation), so there the comparison and the index (`accounts_by_username_bytes`, migration 17) use the
    /// C collation; SQLite compares bytes already, and its unique index on `username` serves the range.
    static func prefixSearch(_ prefix: String, limit: Int, engine: DatabaseDialect) -> FixedStatement {
        let upper = prefix + "\u{7F}"
        return engine == .postgres ? prefixSearchPostgres(prefix, upper, Int64(limit)) : prefixSearchSQLite(prefix, upper, Int64(limit))
    }
    static let touch = FixedSQL("UPDATE accounts SET created_at = created_at WHERE id = ?")
    /// Run on every sign-in: `QueryPlanTests` checks each finds its row through an index.
    static let hotStatements: [FixedStatement] = [touch("a")]
    static let prefixSearchSQLite = FixedSQL("SELECT id, username FROM accounts WHERE username >= ? AND username < ? ORDER BY username LIMIT ?")
    static let prefixSearchPostgres = FixedSQL(
        #"SELECT id, username FROM accounts WHERE username COLLATE "C" >= ? AND username COLLATE "C" < ? ORDER BY username COLLATE "C" LIMIT ?"#
    )

    /// The usernames of the accounts `ids`, by id.
    func usernames(_ ids: [String]) async throws -> [String: String] {
        guard !ids.isEmpty else { return [:] }
        var usernames: [String: String] = [:]
        for row in try await db.select().columns("id", "username").from("accounts").where("id", .in, ids).all() {
            usernames[try row.decode(column: "id", as: String.self)] = try row.decode(column: "username", as: String.self)
        }
        return usernames
    }

    /// Clears the count of wrong passwords and the lock.
    /// Updates the account's row without changing it, before a unit of work starts or ends the account's sessions, so
    /// that units doing so one after another are ordered by the row's lock. A `READ COMMITTED` unit (a biometric
    /// sign-in) waits here for one that ends sessions and then sees what it ended; a `SERIALIZABLE` unit that ends
    /// sessions, meeting a row updated by a sign-in that committed after it began, fails to serialize and runs again, so
    /// it sees the new session. (PostgreSQL: a `SELECT … FOR UPDATE` would not do, as it does not count as a change.) It
    /// sets a column no index or foreign key covers to itself: rewriting the key would make SQLite check every table that
    /// references accounts (1.3 ms a sign-in, measured), and an indexed column would cost PostgreSQL its HOT update.
    /// Nothing on SQLite, which runs one unit of work at a time.
    func guardSessions(account id: String, engine: DatabaseDialect) async throws {
        guard engine == .postgres else { return }
        try await db.run(Self.touch(id))
    }

    func clearPasswordFailures(_ id: String) async throws {
        try await db.update("accounts").set("failed_password_attempts", to: 0).set("locked_until", to: SQLLiteral.null).where("id", .equal, id).run()
    }

    /// Records `failures` wrong passwords in a row.
    func recordPasswordFailures(_ id: String, failures: Int) async throws {
        try await db.update("accounts").set("failed_password_attempts", to: failures).where("id", .equal, id).run()
    }

    /// Locks password sign-in until `until` and restarts the count.
    func lockPassword(_ id: String, until: Int64) async throws {
        try await db.update("accounts").set("failed_password_attempts", to: 0).set("locked_until", to: until).where("id", .equal, id).run()
    }

    /// Stores a new password hash, changed at `at`, and clears the count of wrong passwords.
    func changePassword(_ id: String, hash: String, at: Int64) async throws {
        try await db.update("accounts").set("password_hash", to: hash).set("password_changed_at", to: at).set("failed_password_attempts", to: 0)
            .where("id", .equal, id).run()
    }

    /// Until when password sign-in of the account is locked, if a lock was ever set (it may have passed).
    func lockedUntil(_ id: String) async throws -> Date? {
        Date(
            storedMilliseconds: try await db.select().column("locked_until").from("accounts").where("id", .equal, id).first()?
                .decode(column: "locked_until", as: Int64?.self)
        )
    }

    /// The account's passkey user handle, once made.
    func userHandle(_ id: String) async throws -> Data? {
        try await db.select().column("user_handle").from("accounts").where("id", .equal, id).first()?
            .decode(column: "user_handle", as: String?.self).flatMap(Base64URL.decode)
    }

    /// Stores the account's user handle unless it has one.
    func setUserHandleIfNone(_ id: String, handle: Data) async throws {
        try await db.update("accounts").set("user_handle", to: Base64URL.encode(handle)).where("id", .equal, id)
            .where("user_handle", .is, SQLLiteral.null).run()
    }

    private func selectCredentials() -> SQLSelectBuilder {
        db.select().columns("id", "password_hash", "failed_password_attempts", "locked_until").from("accounts")
    }

    private static func credentials(_ row: any SQLRow) throws -> Credentials {
        Credentials(
            id: try row.decode(column: "id", as: String.self),
            passwordHash: try row.decode(column: "password_hash", as: String.self),
            failedAttempts: try row.decode(column: "failed_password_attempts", as: Int.self),
            lockedUntil: Date(storedMilliseconds: try row.decode(column: "locked_until", as: Int64?.self))
        )
    }
}
