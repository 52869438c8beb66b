import BioAuthCore
import Foundation
import SQLKit

/// The bank's backend services that call BioAuth (OAuth 2.0 client credentials, RFC 6749 §4.4): made, listed, given a
/// new secret and disabled by `bioauth admin service`. A secret is shown once, when it is made; the database keeps only
/// its SHA-256 (a 256-bit random secret needs no slow hash).
public struct ServiceClients: Sendable {
    /// The scopes a client can hold.
    public static let scopes: Set<String> = ["sessions:introspect", "payments:write", "payees:write", "webhooks:write"]

    /// A client as listed (never its secrets).
    public struct Client: Sendable, Equatable {
        public let id: String
        public let name: String
        public let scopes: [String]
        public let createdAt: Date
        public let disabledAt: Date?
        /// Live secrets: 1, or 2 while a rotation is under way.
        public let secrets: Int
    }

    /// A client's id and a secret, as shown once.
    public struct Credentials: Sendable {
        public let clientID: String
        public let secret: String
    }

    let database: any DatabaseExecutor
    let clock: any WallClock
    let random: any RandomSource

    /// Client administration over `database`.
    public init(database: any DatabaseExecutor, clock: any WallClock = SystemClock(), random: any RandomSource = SystemRandomSource()) {
        self.database = database
        self.clock = clock
        self.random = random
    }

    /// Makes a client named `name` (1-64 of `A-Z a-z 0-9 . _ -`, unique) holding `scopes`, and its first secret.
    public func create(name: String, scopes: [String]) async throws -> Credentials {
        guard (1...64).contains(name.utf8.count), name.utf8.allSatisfy({ Self.nameBytes.contains($0) }) else {
            throw ConfigurationError(message: "a service client's name must be 1-64 characters of A-Z a-z 0-9 . _ -")
        }
        let granted = try Self.check(scopes: scopes)
        let credentials = Credentials(clientID: "svc_" + Base64URL.encode(random.bytes(16)), secret: Base64URL.encode(random.bytes(32)))
        let now = clock.now.millisecondsSince1970
        try await database.transaction { db in
            guard try await db.raw("SELECT id FROM service_clients WHERE name = \(bind: name)").first() == nil else {
                throw ConfigurationError(message: "there is already a service client named \(name)")
            }
            try await db.raw(
                """
                INSERT INTO service_clients (id, name, scopes, created_at, disabled_at)
                VALUES (\(bind: credentials.clientID), \(bind: name), \(bind: granted.joined(separator: " ")), \(bind: now), NULL)
                """
            ).run()
            try await Self.addSecret(credentials.secret, client: credentials.clientID, at: now, on: db)
        }
        return credentials
    }

    /// Every client, oldest first.
    public func list() async throws -> [Client] {
        try await database.transaction { db in
            try await db.raw(
                """
                SELECT c.id, c.name, c.scopes, c.created_at, c.disabled_at,
                    (SELECT COUNT(*) FROM service_client_secrets s WHERE s.client_id = c.id) AS secrets
                FROM service_clients c ORDER BY c.created_at, c.id
                """
            ).all().map { row in
                Client(
                    id: try row.decode(column: "id", as: String.self), name: try row.decode(column: "name", as: String.self),
                    scopes: try row.decode(column: "scopes", as: String.self).split(separator: " ").map(String.init),
                    createdAt: Date(millisecondsSince1970: try row.decode(column: "created_at", as: Int64.self)),
                    disabledAt: try row.decode(column: "disabled_at", as: Int64?.self).map(Date.init(millisecondsSince1970:)),
                    secrets: try row.decode(column: "secrets", as: Int.self))
            }
        }
    }

    /// Gives the client a new secret beside its current one: both work until ``finishRotation(clientID:)``, so the
    /// backend can switch without a moment in which neither works.
    public func rotateSecret(clientID: String) async throws -> Credentials {
        let secret = Base64URL.encode(random.bytes(32))
        let now = clock.now.millisecondsSince1970
        try await database.transaction { db in
            let count = try await Self.secretCount(clientID, on: db)
            guard count < 2 else {
                throw ConfigurationError(message: "\(clientID) already has two secrets: finish that rotation first (finish-rotation)")
            }
            // Later than the current secret even within one millisecond (or a clock set back): finish-rotation keeps the newest.
            let latest = try await db.raw("SELECT MAX(created_at) AS latest FROM service_client_secrets WHERE client_id = \(bind: clientID)")
                .first()?.decode(column: "latest", as: Int64?.self) ?? nil
            try await Self.addSecret(secret, client: clientID, at: max(now, (latest ?? now) + 1), on: db)
        }
        return Credentials(clientID: clientID, secret: secret)
    }

    /// Keeps only the client's newest secret. Tokens issued with the older one keep working until they expire.
    public func finishRotation(clientID: String) async throws {
        try await database.transaction { db in
            guard try await Self.secretCount(clientID, on: db) == 2 else {
                throw ConfigurationError(message: "\(clientID) has no rotation under way")
            }
            try await db.raw(
                """
                DELETE FROM service_client_secrets WHERE client_id = \(bind: clientID) AND secret_hash NOT IN
                    (SELECT secret_hash FROM service_client_secrets WHERE client_id = \(bind: clientID) ORDER BY created_at DESC LIMIT 1)
                """
            ).run()
        }
    }

    /// Disables the client: its secrets and every token it holds stop working at once.
    public func disable(clientID: String) async throws {
        try await database.transaction { db in try await disable(clientID: clientID, on: db) }
    }

    /// ``disable(clientID:)`` in the caller's unit of work.
    func disable(clientID: String, on db: any SQLDatabase) async throws {
        let now = clock.now.millisecondsSince1970
        _ = try await Self.secretCount(clientID, on: db)
        try await db.raw("UPDATE service_clients SET disabled_at = \(bind: now) WHERE id = \(bind: clientID) AND disabled_at IS NULL").run()
    }

    // MARK: Internals

    /// The characters a service client's (and an operator's) name may hold.
    static let nameBytes = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-".utf8)

    /// The scopes, each known, without repeats, in a stable order.
    static func check(scopes: [String]) throws -> [String] {
        guard !scopes.isEmpty else { throw ConfigurationError(message: "a service client needs at least one scope") }
        for scope in scopes where !Self.scopes.contains(scope) {
            throw ConfigurationError(message: "unknown scope \(scope); the scopes are \(Self.scopes.sorted().joined(separator: ", "))")
        }
        return Array(Set(scopes)).sorted()
    }

    /// Stored like tokens: SHA-256, base64url.
    static func secretHash(_ secret: String) -> String { BioAuthService.tokenHash(secret) }

    private static func addSecret(_ secret: String, client: String, at now: Int64, on db: any SQLDatabase) async throws {
        try await db.raw(
            "INSERT INTO service_client_secrets (secret_hash, client_id, created_at) VALUES (\(bind: secretHash(secret)), \(bind: client), \(bind: now))"
        ).run()
    }

    /// The client's live secrets; throws when there is no such client.
    private static func secretCount(_ clientID: String, on db: any SQLDatabase) async throws -> Int {
        guard try await db.raw("SELECT id FROM service_clients WHERE id = \(bind: clientID)").first() != nil else {
            throw ConfigurationError(message: "there is no service client \(clientID)")
        }
        return try await db.raw("SELECT COUNT(*) AS n FROM service_client_secrets WHERE client_id = \(bind: clientID)").first()?
            .decode(column: "n", as: Int.self) ?? 0
    }
}
