import BioAuthCore
import Foundation
import SQLKit

/// A valid service token: which client holds it and with which scopes.
struct AuthenticatedService: Sendable {
    var clientID: String
    var scopes: Set<String>
}

/// What the token endpoint grants: a service token, or an approval request's outcome.
enum TokenGrant: Sendable {
    case service(IssuedServiceToken)
    case approval(RedeemedApproval)
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
    /// When the device of a device-key sign-in leaves its cooling-off, while it is in one.
    var coolingOffUntil: Date? = nil
    /// The session's assurance (acr, auth_time, each factor's time, a live step-up, the device key behind it).
    var assurance: IntrospectedAssurance? = nil

    static let inactive = TokenIntrospection(active: false)
}

extension BioAuthService {
    /// The grant types of the token endpoint.
    static let clientCredentialsGrant = "client_credentials"
    /// OpenID CIBA's grant type at the token endpoint.
    static let cibaGrant = "urn:openid:params:grant-type:ciba"

    /// `POST /oauth/token` for `client` (authenticated already, HTTP Basic): by its grant type, a service token
    /// (``issueServiceToken(client:scope:)``) or the outcome of an approval request (``redeemApproval(client:authRequestID:)``).
    func grantToken(client: AuthenticatedClient, grantType: String, scope: String?, authRequestID: String?) async throws -> TokenGrant {
        switch grantType {
        case Self.clientCredentialsGrant:
            return .service(try await issueServiceToken(client: client, scope: scope))
        case Self.cibaGrant:
            return .approval(try await redeemApproval(client: client, authRequestID: authRequestID))
        default:
            throw APIError(.unsupportedGrantType, "grant_type must be \(Self.clientCredentialsGrant) or \(Self.cibaGrant).")
        }
    }

    /// A short-lived service token for `client` holding `scope` (space-separated; all the client's scopes when absent).
    /// Every issue and every refusal is audited with the client's id.
    func issueServiceToken(client: AuthenticatedClient, scope: String?) async throws -> IssuedServiceToken {
        let asked = scope.map { $0.split(separator: " ").map(String.init) }
        let token = newSecret()
        let lifetime = configuration.serviceTokenLifetime
        return try await commit { db in
            // Per client: the clients behind one address do not share it.
            try await rateLimit(
                "oauth-token-client:" + client.id,
                name: .oauthToken,
                limit: configuration.serviceTokenRequestsPerClient,
                window: configuration.rateLimitWindow,
                on: db
            )
            let held = client.scopes
            let granted = asked.map(Set.init) ?? held
            guard !granted.isEmpty, granted.isSubset(of: held) else {
                try await recorder.audit(
                    .serviceTokenIssued,
                    succeeded: false,
                    account: nil,
                    client: client.id,
                    code: ProblemCode.invalidScope.rawValue,
                    on: db
                )
                throw Refusal(APIError(.invalidScope, "Ask only for scopes the client holds: \(held.sorted().joined(separator: " "))."))
            }
            let scopes = granted.sorted()
            try await db.serviceClients.insertToken(
                hash: Self.tokenHash(token),
                client: client.id,
                scopes: scopes,
                issuedAt: now.millisecondsSince1970,
                expiresAt: now.addingTimeInterval(lifetime).millisecondsSince1970
            )
            try await recorder.audit(.serviceTokenIssued, succeeded: true, account: nil, client: client.id, on: db)
            return IssuedServiceToken(accessToken: token, expiresIn: Int(lifetime), scopes: scopes)
        }
    }

    /// The service client whose id and secret these are (HTTP Basic, RFC 6749 §2.3.1), holding `scope` when one is given,
    /// before the request's body is read.
    ///
    /// What is limited is guessing: an address whose failed authentications (an unknown, wrong, missing or malformed id or
    /// secret) reached ``ServerConfiguration/clientAuthenticationFailuresPerAddress`` in this window is refused before its
    /// credentials are checked, and every failure counts. A client with the right credentials never counts there, so a
    /// bank's backend behind one address may poll as many CIBA requests as it has outstanding (each at its interval:
    /// `slow_down` paces them). Refusals of a known client are audited.
    func authenticateClient(_ clientID: String?, secret: String?, scope: String?) async throws -> AuthenticatedClient {
        let failures = "oauth-client-failures:" + (caller.address ?? "unknown")
        let limit = configuration.clientAuthenticationFailuresPerAddress
        let window = configuration.rateLimitWindow
        return try await commit { db in
            let now = self.now.millisecondsSince1970
            if let counted = try await db.rateLimits.hits(failures, now: now, window: Int64(window * 1000)), counted.hits >= Int64(limit) {
                throw Refusal(rateLimitRefusal(until: counted.windowStart + Int64(window * 1000), now: now, name: .oauthToken))
            }
            let client: ServiceClientsTable.Credentials
            let id: String
            do {
                let (sentID, sentSecret) = try Self.clientCredentials(clientID, secret)
                (client, id) = (try await verifiedClient(id: sentID, secret: sentSecret, on: db), sentID)
            } catch let refusal as Refusal {
                try await rateLimit(failures, name: .oauthToken, limit: limit, window: window, on: db)
                throw refusal
            } catch let error as APIError {
                try await rateLimit(failures, name: .oauthToken, limit: limit, window: window, on: db)
                throw Refusal(error)
            }
            if let scope, !client.scopes.contains(scope) {
                throw Refusal(APIError(.unauthorizedClient, "The client does not hold \(scope)."))
            }
            return AuthenticatedClient(
                id: id,
                name: client.name,
                displayName: client.displayName,
                notificationEndpoint: client.notificationEndpoint,
                scopes: client.scopes
            )
        }
    }

    /// A client id and secret of a plausible size, as HTTP Basic sent them; `invalid_client` when either is missing or not.
    static func clientCredentials(_ id: String?, _ secret: String?) throws -> (id: String, secret: String) {
        guard let id, let secret, !id.isEmpty, id.utf8.count <= 64, !secret.isEmpty, secret.utf8.count <= 256 else {
            throw APIError(.invalidClient, "Send the service client's id and secret with HTTP Basic authentication.")
        }
        return (id, secret)
    }

    /// The client whose id and secret these are, in the caller's unit of work. One answer, `invalid_client`, for an unknown
    /// id, a wrong secret and a disabled client, so that client ids cannot be probed; a known client's refusal is audited
    /// (an unknown id is no client's). Thrown as a ``Refusal``: the request still counts toward its address's limit.
    func verifiedClient(id clientID: String, secret: String, on db: any SQLDatabase) async throws -> ServiceClientsTable.Credentials {
        guard let client = try await db.serviceClients.credentials(id: clientID, secretHash: ServiceClients.secretHash(secret)) else {
            throw Refusal(Self.invalidClient)
        }
        guard client.secretMatches, !client.disabled else {
            try await recorder.audit(
                .serviceTokenIssued,
                succeeded: false,
                account: nil,
                client: clientID,
                code: ProblemCode.invalidClient.rawValue,
                on: db
            )
            throw Refusal(Self.invalidClient)
        }
        return client
    }

    /// The client behind a service bearer token that holds `scope`. A user's access token is not a service token.
    func authenticateService(bearer token: String?, scope: String) async throws -> AuthenticatedService {
        guard let token, !token.isEmpty, token.utf8.count <= 256 else {
            throw APIError(.invalidServiceToken, "This operation needs a service token from POST /oauth/token.")
        }
        let found = try await database.transaction { db in try await db.serviceClients.token(hash: Self.tokenHash(token)) }
        guard let found, !found.clientDisabled, found.expiresAt > now else {
            throw APIError(.invalidServiceToken, "The service token is not valid (unknown, expired, or its client disabled).")
        }
        let service = AuthenticatedService(clientID: found.clientID, scopes: Set(found.scopes))
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
            if let found = try await db.sessions.introspect(accessTokenHash: hash) {
                guard !found.token.ended, found.token.expiresAt > now else { return .inactive }
                let session = found.token.session
                let method = session.method
                let assurance = try await introspectedAssurance(of: session.sessionID, on: db)
                let methods: [String] =
                    switch method {
                    case .password: ["pwd"]
                    case .biometric: Self.methods(of: found.biometryKind)
                    // A synced passkey's key lives in software on several devices; a device-bound one in hardware. User
                    // verification (biometric, PIN or passcode) is always required, but the server cannot tell which.
                    case .passkey: [found.passkeyBackupEligible == false ? "hwk" : "swk", "user"]
                    // Approved on the phone with its device key: a second channel (RFC 8176 `mca`).
                    case .approval: Self.methods(of: found.biometryKind) + ["mca"]
                    }
                return TokenIntrospection(
                    active: true,
                    subject: session.accountID,
                    username: session.username,
                    sessionID: session.sessionID,
                    expiresAt: found.token.expiresAt,
                    issuedAt: found.issuedAt,
                    tokenType: "access_token",
                    methods: methods,
                    deviceID: session.deviceID,
                    appAttested: method == .biometric ? found.deviceAttested : nil,
                    passkeyID: session.passkeyID,
                    coolingOffUntil: found.deviceCoolingOffUntil.flatMap { $0 > now ? $0 : nil },
                    assurance: assurance
                )
            }
            if let found = try await db.serviceClients.token(hash: hash) {
                guard !found.clientDisabled, found.expiresAt > now else { return .inactive }
                return TokenIntrospection(
                    active: true,
                    expiresAt: found.expiresAt,
                    issuedAt: found.issuedAt,
                    clientID: found.clientID,
                    scope: found.scopes.joined(separator: " "),
                    tokenType: "service_token"
                )
            }
            return .inactive
        }
    }

    /// What a token request with wrong client credentials is told, whatever was wrong.
    static let invalidClient = APIError(.invalidClient, "The client id or secret is wrong, or the client is disabled.")

    /// RFC 8176 for a device-key sign-in: `hwk` (a hardware-bound key) and the biometric that unlocked it.
    static func methods(of kind: BiometryKind?) -> [String] {
        if kind == .faceID { return ["hwk", "face"] }
        if kind == .touchID { return ["hwk", "fpt"] }
        // Optic ID, and any sensor added later: a user-presence biometric RFC 8176 has no closer name for.
        return ["hwk", "user"]
    }
}
