import BioAuthCore
import Foundation
import SQLKit

/// The bank's backend services that call BioAuth (OAuth 2.0 client credentials, RFC 6749 §4.4): made, listed, given a
/// new secret and disabled by `bioauth admin service`. A secret is shown once, when it is made; the database keeps only
/// its SHA-256 (a 256-bit random secret needs no slow hash).
public struct ServiceClients: Sendable {
    /// The scopes a client can hold.
    public static let scopes: Set<String> = [
        "sessions:introspect", "payments:write", "payees:write", "webhooks:write", "approvals:write", "bindings:write", "passwords:reset",
    ]

    /// A client as listed (never its secrets).
    public struct Client: Sendable, Equatable {
        public let id: String
        public let name: String
        public let scopes: [String]
        public let createdAt: Date
        public let disabledAt: Date?
        /// Live secrets: 1, or 2 while a rotation is under way.
        public let secrets: Int
        /// The name the customer's phone shows for its requests, when set (else its name).
        public var displayName: String? = nil
        /// What support calls it: its display name, else its name.
        public var shownName: String { displayName ?? name }
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
            guard try await !db.serviceClients.exists(name: name) else {
                throw ConfigurationError(message: "there is already a service client named \(name)")
            }
            try await db.serviceClients.insert(id: credentials.clientID, name: name, scopes: granted, at: now)
            try await Self.addSecret(credentials.secret, client: credentials.clientID, at: now, on: db)
            try await audit(.serviceClientCreated, client: credentials.clientID, "\(name): \(granted.joined(separator: " "))", on: db)
        }
        return credentials
    }

    /// Every client, oldest first.
    public func list() async throws -> [Client] {
        try await database.transaction { db in try await db.serviceClients.list() }
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
            let latest = try await db.serviceClients.newestSecretCreatedAt(client: clientID)
            try await Self.addSecret(secret, client: clientID, at: max(now, (latest ?? now) + 1), on: db)
            try await audit(.serviceClientChanged, client: clientID, "secret rotation started", on: db)
        }
        return Credentials(clientID: clientID, secret: secret)
    }

    /// Keeps only the client's newest secret. Tokens issued with the older one keep working until they expire.
    public func finishRotation(clientID: String) async throws {
        try await database.transaction { db in
            guard try await Self.secretCount(clientID, on: db) == 2 else {
                throw ConfigurationError(message: "\(clientID) has no rotation under way")
            }
            try await db.serviceClients.deleteSecretsButNewest(client: clientID)
            try await audit(.serviceClientChanged, client: clientID, "secret rotation finished", on: db)
        }
    }

    /// Sets the name the customer's phone shows for the client's approval requests ("Bank Call Centre"): at most 64
    /// characters under the display-name rule of docs/PROTOCOL.md (payee names'). Nil shows the client's name.
    public func setDisplayName(clientID: String, to displayName: String?) async throws {
        let checked: String?
        switch displayName.map({ DisplayName.checked($0, maxCharacters: 64) }) {
        case .none: checked = nil
        case .success(let name): checked = name
        case .failure(let refusal): throw ConfigurationError(message: "the display name \(refusal.description)")
        }
        try await database.transaction { db in
            guard try await db.serviceClients.exists(id: clientID) else {
                throw ConfigurationError(message: "there is no service client \(clientID)")
            }
            try await db.serviceClients.setDisplayName(clientID, to: checked)
            try await audit(.serviceClientChanged, client: clientID, "display name \(checked == nil ? "removed" : "set")", on: db)
        }
    }

    /// Registers where OpenID CIBA's ping mode notifies the client (`url` by the webhook URL rule of docs/PROTOCOL.md:
    /// `https://`, or `http://` to loopback for testing); nil removes it (the client polls). A client with an endpoint must
    /// send `client_notification_token` with each request; each ping goes through the outbound rules, as webhooks do.
    public func setNotificationEndpoint(clientID: String, to url: String?) async throws {
        let checked: String?
        do { checked = try url.map(BioAuthService.webhookURL) } catch let error as APIError {
            throw ConfigurationError(message: "the notification endpoint: \(error.detail)")
        }
        try await database.transaction { db in
            guard try await db.serviceClients.exists(id: clientID) else {
                throw ConfigurationError(message: "there is no service client \(clientID)")
            }
            try await db.serviceClients.setNotificationEndpoint(clientID, to: checked)
            try await audit(.serviceClientChanged, client: clientID, "notification endpoint \(checked == nil ? "removed" : "set")", on: db)
        }
    }

    /// Disables the client: its secrets and every token it holds stop working at once.
    public func disable(clientID: String) async throws {
        try await database.transaction { db in
            try await disable(clientID: clientID, on: db)
            try await audit(.serviceClientDisabled, client: clientID, clientID, on: db)
        }
    }

    /// ``disable(clientID:)`` in the caller's unit of work, which audits it.
    func disable(clientID: String, on db: any SQLDatabase) async throws {
        let now = clock.now.millisecondsSince1970
        _ = try await Self.secretCount(clientID, on: db)
        try await db.serviceClients.markDisabled(clientID, at: now)
    }

    // MARK: Internals

    /// Audits a change made through this type (the command line's: the console's admins audit their own, with who they
    /// are), in the change's unit of work.
    private func audit(_ kind: AuditKind, client: String, _ what: String, on db: any SQLDatabase) async throws {
        try await ChangeRecorder.outsideTheServer(database: database, clock: clock, random: random)
            .audit(kind, succeeded: true, account: nil, client: client, operator: .commandLine(what), on: db)
    }

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
        try await db.serviceClients.insertSecret(hash: secretHash(secret), client: client, at: now)
    }

    /// The client's live secrets; throws when there is no such client.
    private static func secretCount(_ clientID: String, on db: any SQLDatabase) async throws -> Int {
        guard try await db.serviceClients.exists(id: clientID) else { throw ConfigurationError(message: "there is no service client \(clientID)") }
        return try await db.serviceClients.secretCount(client: clientID)
    }
}
