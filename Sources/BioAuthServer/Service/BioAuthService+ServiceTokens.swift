import BioAuthCore
import Foundation
import SQLKit

/// A valid service token: which client holds it and with which scopes.
struct AuthenticatedService: Sendable {
    var clientID: String
    var scopes: Set<String>
}

/// A service token as issued (the token itself exists only here and in the response).
struct IssuedServiceToken: Sendable {
    var accessToken: String
    var expiresIn: Int
    var scopes: [String]
}

/// What `POST /oauth/introspect` says about a token (RFC 7662 §2.2); `active` false says nothing more.
struct TokenIntrospection: Sendable, Equatable {
    var active: Bool
    var subject: String?
    var username: String?
    var sessionID: String?
    var expiresAt: Date?
    var issuedAt: Date?
    var clientID: String?
    var scope: String?
    var tokenType: String?
    /// RFC 8176 authentication method references.
    var methods: [String]?
    var deviceID: String?
    var appAttested: Bool?
    /// The passkey of a passkey sign-in.
    var passkeyID: String? = nil

    static let inactive = TokenIntrospection(active: false)
}

extension BioAuthService {
    /// `POST /oauth/token`: client credentials (HTTP Basic, RFC 6749 §2.3.1) for a short-lived service token holding
    /// `scope` (space-separated; all the client's scopes when absent). Every issue and every refusal of a known client
    /// is audited with its client id.
    func issueServiceToken(
        clientID: String?, secret: String?, grantType: String, scope: String?, from address: String? = ClientAddress.current
    ) async throws -> IssuedServiceToken {
        guard let clientID, let secret, !clientID.isEmpty, clientID.utf8.count <= 64, !secret.isEmpty, secret.utf8.count <= 256 else {
            throw APIError(.invalidClient, "Send the service client's id and secret with HTTP Basic authentication.")
        }
        guard grantType == "client_credentials" else {
            throw APIError(.unsupportedGrantType, "grant_type must be client_credentials.")
        }
        let asked = scope.map { $0.split(separator: " ").map(String.init) }
        let token = newSecret()
        let lifetime = configuration.serviceTokenLifetime
        return try await commit { db in
            // Counted whatever the outcome, per client address (as the sign-in challenges are).
            try await rateLimit(
                "oauth-token:" + (address ?? "unknown"), name: "oauth_token", limit: configuration.serviceTokenRequestsPerClient,
                window: configuration.rateLimitWindow, on: db)
            let row = try await db.raw(
                """
                SELECT c.scopes, c.disabled_at,
                    (SELECT COUNT(*) FROM service_client_secrets s WHERE s.client_id = c.id AND s.secret_hash = \(bind: ServiceClients.secretHash(secret))) AS matches
                FROM service_clients c WHERE c.id = \(bind: clientID)
                """
            ).first()
            // A refusal, not a rollback: the request still counts toward the address's limit. (No audit event: an
            // unknown id is no client's.)
            guard let row else { throw Refusal(APIError(.invalidClient, "The client id or secret is wrong.")) }
            guard try row.decode(column: "matches", as: Int.self) == 1, try row.decode(column: "disabled_at", as: Int64?.self) == nil else {
                try await audit(.serviceTokenIssued, succeeded: false, account: nil, client: clientID, code: ProblemCode.invalidClient.rawValue, on: db)
                throw Refusal(APIError(.invalidClient, "The client id or secret is wrong, or the client is disabled."))
            }
            let held = Set(try row.decode(column: "scopes", as: String.self).split(separator: " ").map(String.init))
            let granted = asked.map(Set.init) ?? held
            guard !granted.isEmpty, granted.isSubset(of: held) else {
                try await audit(.serviceTokenIssued, succeeded: false, account: nil, client: clientID, code: ProblemCode.invalidScope.rawValue, on: db)
                throw Refusal(APIError(.invalidScope, "Ask only for scopes the client holds: \(held.sorted().joined(separator: " "))."))
            }
            let scopes = granted.sorted()
            try await db.raw(
                """
                INSERT INTO service_tokens (token_hash, client_id, scopes, issued_at, expires_at)
                VALUES (\(bind: Self.tokenHash(token)), \(bind: clientID), \(bind: scopes.joined(separator: " ")),
                    \(bind: now.millisecondsSince1970), \(bind: now.addingTimeInterval(lifetime).millisecondsSince1970))
                """
            ).run()
            try await audit(.serviceTokenIssued, succeeded: true, account: nil, client: clientID, on: db)
            return IssuedServiceToken(accessToken: token, expiresIn: Int(lifetime), scopes: scopes)
        }
    }

    /// The client behind a service bearer token that holds `scope`. A user's access token is not a service token.
    func authenticateService(bearer token: String?, scope: String) async throws -> AuthenticatedService {
        guard let token, !token.isEmpty, token.utf8.count <= 256 else {
            throw APIError(.invalidServiceToken, "This operation needs a service token from POST /oauth/token.")
        }
        let row = try await database.transaction { db in
            try await db.raw(
                """
                SELECT t.client_id, t.scopes, t.expires_at, c.disabled_at FROM service_tokens t JOIN service_clients c ON c.id = t.client_id
                WHERE t.token_hash = \(bind: Self.tokenHash(token))
                """
            ).first()
        }
        guard let row, try row.decode(column: "disabled_at", as: Int64?.self) == nil,
            Date(millisecondsSince1970: try row.decode(column: "expires_at", as: Int64.self)) > now
        else { throw APIError(.invalidServiceToken, "The service token is not valid (unknown, expired, or its client disabled).") }
        let service = AuthenticatedService(
            clientID: try row.decode(column: "client_id", as: String.self),
            scopes: Set(try row.decode(column: "scopes", as: String.self).split(separator: " ").map(String.init)))
        guard service.scopes.contains(scope) else { throw APIError(.insufficientScope, "The service token does not hold \(scope).") }
        return service
    }

    /// RFC 7662 introspection of a user's access token or a service token. An unknown, expired or ended one is
    /// inactive, and nothing more is said about it.
    func introspect(_ token: String) async throws -> TokenIntrospection {
        guard !token.isEmpty, token.utf8.count <= 256 else { return .inactive }
        let hash = Self.tokenHash(token)
        let now = self.now
        return try await database.transaction { db in
            if let row = try await db.raw(
                """
                SELECT s.id, s.account_id, s.method, s.device_id, s.passkey_id, s.ended_at, t.expires_at, t.issued_at, a.username,
                    d.biometry_kind, (SELECT COUNT(*) FROM app_attest_keys k WHERE k.device_id = s.device_id) AS attested,
                    p.backup_eligible
                FROM access_tokens t JOIN sessions s ON s.id = t.session_id JOIN accounts a ON a.id = s.account_id
                LEFT JOIN devices d ON d.id = s.device_id LEFT JOIN passkeys p ON p.id = s.passkey_id
                WHERE t.token_hash = \(bind: hash)
                """
            ).first() {
                let expiresAt = Date(millisecondsSince1970: try row.decode(column: "expires_at", as: Int64.self))
                guard try row.decode(column: "ended_at", as: Int64?.self) == nil, expiresAt > now else { return .inactive }
                let method = SignInMethod(rawValue: try row.decode(column: "method", as: String.self)) ?? .password
                let biometric = method == .biometric
                let kind = try row.decode(column: "biometry_kind", as: String?.self).flatMap(BiometryKind.init(rawValue:))
                let methods: [String] =
                    switch method {
                    case .password: ["pwd"]
                    case .biometric: Self.methods(of: kind)
                    // A synced passkey's key lives in software on several devices; a device-bound one in hardware. User
                    // verification (biometric, PIN or passcode) is always required, but the server cannot tell which.
                    case .passkey: [try row.decode(column: "backup_eligible", as: Int?.self) == 0 ? "hwk" : "swk", "user"]
                    }
                return TokenIntrospection(
                    active: true, subject: try row.decode(column: "account_id", as: String.self),
                    username: try row.decode(column: "username", as: String.self), sessionID: try row.decode(column: "id", as: String.self),
                    expiresAt: expiresAt, issuedAt: try row.decode(column: "issued_at", as: Int64?.self).map(Date.init(millisecondsSince1970:)),
                    tokenType: "access_token", methods: methods,
                    deviceID: try row.decode(column: "device_id", as: String?.self),
                    appAttested: biometric ? try row.decode(column: "attested", as: Int.self) > 0 : nil,
                    passkeyID: try row.decode(column: "passkey_id", as: String?.self))
            }
            if let row = try await db.raw(
                """
                SELECT t.client_id, t.scopes, t.issued_at, t.expires_at, c.disabled_at FROM service_tokens t
                JOIN service_clients c ON c.id = t.client_id WHERE t.token_hash = \(bind: hash)
                """
            ).first() {
                let expiresAt = Date(millisecondsSince1970: try row.decode(column: "expires_at", as: Int64.self))
                guard try row.decode(column: "disabled_at", as: Int64?.self) == nil, expiresAt > now else { return .inactive }
                return TokenIntrospection(
                    active: true, expiresAt: expiresAt,
                    issuedAt: Date(millisecondsSince1970: try row.decode(column: "issued_at", as: Int64.self)),
                    clientID: try row.decode(column: "client_id", as: String.self), scope: try row.decode(column: "scopes", as: String.self),
                    tokenType: "service_token")
            }
            return .inactive
        }
    }

    /// RFC 8176 for a device-key sign-in: `hwk` (a hardware-bound key) and the biometric that unlocked it.
    static func methods(of kind: BiometryKind?) -> [String] {
        if kind == .faceID { return ["hwk", "face"] }
        if kind == .touchID { return ["hwk", "fpt"] }
        // Optic ID, and any sensor added later: a user-presence biometric RFC 8176 has no closer name for.
        return ["hwk", "user"]
    }
}
