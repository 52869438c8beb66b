import Foundation
import SQLKit

extension SQLDatabase {
    /// `service_clients`, `service_client_secrets` and `service_tokens`: the bank's backend services, the hashes of their
    /// secrets and of the tokens they hold.
    var serviceClients: ServiceClientsTable { ServiceClientsTable(db: self) }
}

/// The statements on `service_clients`, `service_client_secrets` and `service_tokens`.
struct ServiceClientsTable: Table {
    let db: any SQLDatabase

    /// Whether a client is named `name`.
    func exists(name: String) async throws -> Bool {
        try await db.select().column("id").from("service_clients").where("name", .equal, name).first() != nil
    }

    /// Whether the client `id` exists, disabled or not.
    func exists(id: String) async throws -> Bool {
        try await db.select().column("id").from("service_clients").where("id", .equal, id).first() != nil
    }

    /// Stores a new client.
    func insert(id: String, name: String, scopes: [String], at: Int64) async throws {
        try await db.insert(into: "service_clients").columns("id", "name", "scopes", "created_at", "disabled_at")
            .values(SQLBind(id), SQLBind(name), SQLBind(scopes.joined(separator: " ")), SQLBind(at), SQLBind(Int64?.none)).run()
    }

    /// Every client with how many secrets it has, oldest first.
    func list() async throws -> [ServiceClients.Client] {
        try await db.raw(
            """
            SELECT c.id, c.name, c.display_name, c.scopes, c.created_at, c.disabled_at,
                (SELECT COUNT(*) FROM service_client_secrets s WHERE s.client_id = c.id) AS secrets
            FROM service_clients c ORDER BY c.created_at, c.id
            """
        ).all().map { row in
            ServiceClients.Client(
                id: try row.decode(column: "id", as: String.self),
                name: try row.decode(column: "name", as: String.self),
                scopes: try row.decode(column: "scopes", as: String.self).split(separator: " ").map(String.init),
                createdAt: Date(millisecondsSince1970: try row.decode(column: "created_at", as: Int64.self)),
                disabledAt: Date(storedMilliseconds: try row.decode(column: "disabled_at", as: Int64?.self)),
                secrets: try row.decode(column: "secrets", as: Int.self),
                displayName: try row.decode(column: "display_name", as: String?.self)
            )
        }
    }

    /// Marks the client disabled at `at`, unless it is already.
    func markDisabled(_ id: String, at: Int64) async throws {
        try await db.update("service_clients").set("disabled_at", to: at).where("id", .equal, id).where("disabled_at", .is, SQLLiteral.null).run()
    }

    /// A client as a token request sees it: its scopes, whether it is disabled, and whether the secret's hash is one of its;
    /// with the name its approval requests show.
    struct Credentials: Sendable {
        var scopes: Set<String>
        var disabled: Bool
        var secretMatches: Bool
        var name: String = ""
        var displayName: String? = nil
        /// Where OpenID CIBA's ping mode notifies the client; nil: the client polls.
        var notificationEndpoint: String? = nil
    }

    /// The client `id` and whether `secretHash` is one of its secrets.
    func credentials(id: String, secretHash: String) async throws -> Credentials? {
        guard
            let row = try await db.raw(
                """
                SELECT c.name, c.display_name, c.notification_endpoint, c.scopes, c.disabled_at,
                    (SELECT COUNT(*) FROM service_client_secrets s WHERE s.client_id = c.id AND s.secret_hash = \(bind: secretHash)) AS matches
                FROM service_clients c WHERE c.id = \(bind: id)
                """
            ).first()
        else { return nil }
        return Credentials(
            scopes: Set(try row.decode(column: "scopes", as: String.self).split(separator: " ").map(String.init)),
            disabled: try row.decode(column: "disabled_at", as: Int64?.self) != nil,
            secretMatches: try row.decode(column: "matches", as: Int.self) == 1,
            name: try row.decode(column: "name", as: String.self),
            displayName: try row.decode(column: "display_name", as: String?.self),
            notificationEndpoint: try row.decode(column: "notification_endpoint", as: String?.self)
        )
    }

    /// Sets the name the client's approval requests show on the phone (nil: its name).
    func setDisplayName(_ id: String, to name: String?) async throws {
        try await db.update("service_clients").set("display_name", to: name).where("id", .equal, id).run()
    }

    /// Where OpenID CIBA's ping mode notifies the client `id`, if anywhere (nil too for a disabled client).
    func notificationEndpoint(of id: String) async throws -> String? {
        try await db.select().column("notification_endpoint").from("service_clients").where("id", .equal, id)
            .where("disabled_at", .is, SQLLiteral.null).first()?.decode(column: "notification_endpoint", as: String?.self) ?? nil
    }

    /// Sets where OpenID CIBA's ping mode notifies the client (nil: nowhere, the client polls).
    func setNotificationEndpoint(_ id: String, to url: String?) async throws {
        try await db.update("service_clients").set("notification_endpoint", to: url).where("id", .equal, id).run()
    }

    // MARK: Secrets

    /// Stores a secret's hash for `client`.
    func insertSecret(hash: String, client: String, at: Int64) async throws {
        try await db.insert(into: "service_client_secrets").columns("secret_hash", "client_id", "created_at")
            .values(SQLBind(hash), SQLBind(client), SQLBind(at)).run()
    }

    /// How many secrets the client has.
    func secretCount(client: String) async throws -> Int {
        try await db.select().column(SQLFunction("COUNT", args: SQLLiteral.all), as: "n").from("service_client_secrets")
            .where("client_id", .equal, client).first()?.decode(column: "n", as: Int.self) ?? 0
    }

    /// When the client's newest secret was made.
    func newestSecretCreatedAt(client: String) async throws -> Int64? {
        try await db.select().column(SQLFunction("MAX", args: SQLColumn("created_at")), as: "latest").from("service_client_secrets")
            .where("client_id", .equal, client).first()?.decode(column: "latest", as: Int64?.self) ?? nil
    }

    /// Deletes every secret of the client but the newest.
    func deleteSecretsButNewest(client: String) async throws {
        try await db.raw(
            """
            DELETE FROM service_client_secrets WHERE client_id = \(bind: client) AND secret_hash NOT IN
                (SELECT secret_hash FROM service_client_secrets WHERE client_id = \(bind: client) ORDER BY created_at DESC LIMIT 1)
            """
        ).run()
    }

    // MARK: Tokens

    /// Stores a service token's hash.
    func insertToken(hash: String, client: String, scopes: [String], issuedAt: Int64, expiresAt: Int64) async throws {
        try await db.insert(into: "service_tokens").columns("token_hash", "client_id", "scopes", "issued_at", "expires_at")
            .values(SQLBind(hash), SQLBind(client), SQLBind(scopes.joined(separator: " ")), SQLBind(issuedAt), SQLBind(expiresAt)).run()
    }

    /// A service token with its client's state.
    struct Token: Sendable {
        var clientID: String
        /// As stored: sorted.
        var scopes: [String]
        var issuedAt: Date?
        var expiresAt: Date
        var clientDisabled: Bool
    }

    /// The service token whose hash is `hash`.
    func token(hash: String) async throws -> Token? {
        guard
            let row = try await db.raw(
                """
                SELECT t.client_id, t.scopes, t.issued_at, t.expires_at, c.disabled_at FROM service_tokens t
                JOIN service_clients c ON c.id = t.client_id WHERE t.token_hash = \(bind: hash)
                """
            ).first()
        else { return nil }
        return Token(
            clientID: try row.decode(column: "client_id", as: String.self),
            scopes: try row.decode(column: "scopes", as: String.self).split(separator: " ").map(String.init),
            issuedAt: Date(storedMilliseconds: try row.decode(column: "issued_at", as: Int64?.self)),
            expiresAt: Date(millisecondsSince1970: try row.decode(column: "expires_at", as: Int64.self)),
            clientDisabled: try row.decode(column: "disabled_at", as: Int64?.self) != nil
        )
    }
}

// MARK: Retention

extension ServiceClientsTable {
    /// Service tokens that expired before `cutoff`.
    static func purgeTokens(before cutoff: Int64) -> PurgeRule {
        PurgeRule(table: "service_tokens", key: "token_hash", condition: "expires_at < \(bind: cutoff)")
    }
}
