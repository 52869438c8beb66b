import Foundation
import SQLKit

/// A new token pair. The tokens exist only here and in the response; the database keeps their hashes.
struct IssuedTokens: Sendable {
    var sessionID: String
    var accountID: String
    var accessToken: String
    var accessTokenExpiresAt: Date
    var refreshToken: String
    var refreshTokenExpiresAt: Date
}

/// How a session was started.
enum SignInMethod: String, Sendable {
    case password
    case biometric
    /// A WebAuthn passkey (`POST /v1/sessions/passkey`).
    case passkey
    /// A sign-in on another channel that the customer approved on their phone (CIBA); the session's device is the phone.
    case approval
}

/// The session behind a valid access token.
struct AuthenticatedSession: Sendable {
    var sessionID: String
    var accountID: String
    var username: String
    var installationID: String
    var deviceID: String?
    var method: SignInMethod
    /// The passkey that signed in, for passkey sessions.
    var passkeyID: String? = nil
}

extension BioAuthService {
    /// The session of a bearer access token.
    func authenticate(bearer token: String?) async throws -> AuthenticatedSession {
        guard let token, !token.isEmpty, token.utf8.count <= 256 else {
            throw APIError(.unauthenticated, "Sign in first: this operation needs a bearer access token.")
        }
        let hash = Self.tokenHash(token)
        // One read, consistent on its own: no transaction around it (on PostgreSQL no BEGIN and COMMIT, two of the three
        // round trips every authenticated request made for this).
        let found = try await database.transaction(isolation: .eachStatement) { db in try await db.sessions.find(accessTokenHash: hash) }
        guard let found else { throw APIError(.unauthenticated, "The access token is not valid.") }
        guard !found.ended else { throw APIError(.sessionEnded, "The session has ended. Sign in again.") }
        guard found.expiresAt > now else { throw APIError(.tokenExpired, "The access token expired. Refresh it.") }
        return found.session
    }

    /// Rotates a refresh token. A token that was rotated before ends its whole session (reuse detection).
    func refresh(token: String) async throws -> IssuedTokens {
        guard !token.isEmpty, token.utf8.count <= 256 else {
            throw APIError(.invalidRefreshToken, "The refresh token is not valid.")
        }
        let hash = Self.tokenHash(token)
        return try await commit { db in
            guard let token = try await db.sessions.find(refreshTokenHash: hash) else {
                throw Refusal(APIError(.invalidRefreshToken, "The refresh token is not valid."))
            }
            let sessionID = token.sessionID
            let accountID = token.accountID
            if token.rotated {
                let wasLive = !token.sessionEnded
                try await endSession(sessionID, reason: "refresh_token_reuse", on: db)
                try await recorder.audit(
                    .refreshTokenReuse,
                    succeeded: false,
                    account: accountID,
                    session: sessionID,
                    code: "refresh_token_reused",
                    on: db
                )
                throw Refusal(
                    APIError(
                        .refreshTokenReused,
                        wasLive ? "This refresh token was already used; the session has been ended." : "This refresh token was already used."
                    )
                )
            }
            guard !token.sessionEnded else { throw Refusal(APIError(.sessionEnded, "The session has ended. Sign in again.")) }
            guard token.expiresAt > now else { throw Refusal(APIError(.invalidRefreshToken, "The refresh token expired. Sign in again.")) }
            try await db.sessions.markRotated(refreshTokenHash: hash, at: now.millisecondsSince1970)
            try await db.sessions.deleteAccessTokens(session: sessionID)
            return try await issueTokens(session: sessionID, account: accountID, on: db)
        }
    }

    /// Ends the session at once.
    func signOut(_ session: AuthenticatedSession) async throws {
        try await commit { db -> Void in
            try await endSession(session.sessionID, reason: "signed_out", on: db)
            try await recorder.audit(.signOut, succeeded: true, account: session.accountID, session: session.sessionID, on: db)
            return
        }
    }

    // MARK: Internals

    /// Starts a session for `account` on `installationID`, ending the account's previous session there.
    func startSession(
        account: String,
        installationID: String,
        method: SignInMethod,
        device: String?,
        passkey: String? = nil,
        on db: any SQLDatabase
    ) async throws -> IssuedTokens {
        let tokens = newTokens(session: newID(), account: account)
        try await db.accounts.guardSessions(account: account, engine: database.dialect)
        try await db.sessions.start(
            SessionsTable.Start(
                id: tokens.sessionID,
                account: account,
                installationID: installationID,
                device: device,
                method: method,
                passkey: passkey,
                accessTokenHash: Self.tokenHash(tokens.accessToken),
                accessTokenExpiresAt: tokens.accessTokenExpiresAt.millisecondsSince1970,
                refreshTokenHash: Self.tokenHash(tokens.refreshToken),
                refreshTokenExpiresAt: tokens.refreshTokenExpiresAt.millisecondsSince1970
            ),
            replacing: "replaced",
            at: now.millisecondsSince1970,
            engine: database.dialect
        )
        return tokens
    }

    /// New tokens for `session`, to be stored.
    private func newTokens(session: String, account: String) -> IssuedTokens {
        IssuedTokens(
            sessionID: session,
            accountID: account,
            accessToken: newSecret(),
            accessTokenExpiresAt: now.addingTimeInterval(configuration.accessTokenLifetime),
            refreshToken: newSecret(),
            refreshTokenExpiresAt: now.addingTimeInterval(configuration.refreshTokenLifetime)
        )
    }

    private func issueTokens(session: String, account: String, on db: any SQLDatabase) async throws -> IssuedTokens {
        let tokens = newTokens(session: session, account: account)
        try await db.sessions.insertAccessToken(
            hash: Self.tokenHash(tokens.accessToken),
            session: session,
            expiresAt: tokens.accessTokenExpiresAt.millisecondsSince1970,
            issuedAt: now.millisecondsSince1970
        )
        try await db.sessions.insertRefreshToken(
            hash: Self.tokenHash(tokens.refreshToken),
            session: session,
            expiresAt: tokens.refreshTokenExpiresAt.millisecondsSince1970
        )
        return tokens
    }

    func endSession(_ session: String, reason: String, on db: any SQLDatabase) async throws {
        try await db.sessions.end(session, reason: reason, at: now.millisecondsSince1970)
        // The session's access tokens stay, so that presenting one answers `session_ended` rather than
        // a bare `unauthenticated`: the app can tell the user they were signed out.
    }

}
