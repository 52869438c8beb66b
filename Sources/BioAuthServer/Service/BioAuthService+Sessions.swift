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
        let row = try await database.transaction { db in try await db.first(Self.sessionByAccessToken(hash)) }
        guard let row else { throw APIError(.unauthenticated, "The access token is not valid.") }
        guard try row.decode(column: "ended_at", as: Int64?.self) == nil else {
            throw APIError(.sessionEnded, "The session has ended. Sign in again.")
        }
        guard Date(millisecondsSince1970: try row.decode(column: "expires_at", as: Int64.self)) > now else {
            throw APIError(.tokenExpired, "The access token expired. Refresh it.")
        }
        return AuthenticatedSession(
            sessionID: try row.decode(column: "id", as: String.self),
            accountID: try row.decode(column: "account_id", as: String.self),
            username: try row.decode(column: "username", as: String.self),
            installationID: try row.decode(column: "installation_id", as: String.self),
            deviceID: try row.decode(column: "device_id", as: String?.self),
            method: SignInMethod(rawValue: try row.decode(column: "method", as: String.self)) ?? .password,
            passkeyID: try row.decode(column: "passkey_id", as: String?.self))
    }

    /// Rotates a refresh token. A token that was rotated before ends its whole session (reuse detection).
    func refresh(token: String) async throws -> IssuedTokens {
        guard !token.isEmpty, token.utf8.count <= 256 else {
            throw APIError(.invalidRefreshToken, "The refresh token is not valid.")
        }
        let hash = Self.tokenHash(token)
        return try await commit { db in
            let row = try await db.raw(
                """
                SELECT r.session_id, r.expires_at, r.rotated_at, s.account_id, s.installation_id, s.device_id, s.method, s.ended_at
                FROM refresh_tokens r JOIN sessions s ON s.id = r.session_id
                WHERE r.token_hash = \(bind: hash)
                """
            ).first()
            guard let row else { throw Refusal(APIError(.invalidRefreshToken, "The refresh token is not valid.")) }
            let sessionID = try row.decode(column: "session_id", as: String.self)
            let accountID = try row.decode(column: "account_id", as: String.self)
            if try row.decode(column: "rotated_at", as: Int64?.self) != nil {
                let wasLive = try row.decode(column: "ended_at", as: Int64?.self) == nil
                try await endSession(sessionID, reason: "refresh_token_reuse", on: db)
                try await audit(.refreshTokenReuse, succeeded: false, account: accountID, session: sessionID, code: "refresh_token_reused", on: db)
                throw Refusal(APIError(
                    .refreshTokenReused,
                    wasLive ? "This refresh token was already used; the session has been ended." : "This refresh token was already used."))
            }
            guard try row.decode(column: "ended_at", as: Int64?.self) == nil else {
                throw Refusal(APIError(.sessionEnded, "The session has ended. Sign in again."))
            }
            guard Date(millisecondsSince1970: try row.decode(column: "expires_at", as: Int64.self)) > now else {
                throw Refusal(APIError(.invalidRefreshToken, "The refresh token expired. Sign in again."))
            }
            try await db.update("refresh_tokens").set("rotated_at", to: now.millisecondsSince1970)
                .where("token_hash", .equal, hash).run()
            try await db.run(Self.deleteAccessTokens(sessionID))
            return try await issueTokens(session: sessionID, account: accountID, on: db)
        }
    }

    /// Ends the session at once.
    func signOut(_ session: AuthenticatedSession) async throws {
        try await commit { db -> Void in
            try await endSession(session.sessionID, reason: "signed_out", on: db)
            try await audit(.signOut, succeeded: true, account: session.accountID, session: session.sessionID, on: db)
            return
        }
    }

    // MARK: Internals

    /// Starts a session for `account` on `installationID`, ending the account's previous session there.
    func startSession(
        account: String, installationID: String, method: SignInMethod, device: String?, passkey: String? = nil, on db: any SQLDatabase
    ) async throws -> IssuedTokens {
        try await endSessions(account: account, installationID: installationID, reason: "replaced", on: db)
        let sessionID = newID()
        try await db.run(Self.insertSession(sessionID, account, installationID, device, method.rawValue, now.millisecondsSince1970, passkey))
        return try await issueTokens(session: sessionID, account: account, on: db)
    }

    private func issueTokens(session: String, account: String, on db: any SQLDatabase) async throws -> IssuedTokens {
        let tokens = IssuedTokens(
            sessionID: session, accountID: account,
            accessToken: newSecret(), accessTokenExpiresAt: now.addingTimeInterval(configuration.accessTokenLifetime),
            refreshToken: newSecret(), refreshTokenExpiresAt: now.addingTimeInterval(configuration.refreshTokenLifetime))
        try await db.run(Self.insertAccessToken(
            Self.tokenHash(tokens.accessToken), session, tokens.accessTokenExpiresAt.millisecondsSince1970, now.millisecondsSince1970))
        try await db.run(Self.insertRefreshToken(Self.tokenHash(tokens.refreshToken), session, tokens.refreshTokenExpiresAt.millisecondsSince1970))
        return tokens
    }

    // The statements of every authenticated request and every sign-in (FixedSQL: no builder serialized per call).
    static let sessionByAccessToken = FixedSQL(
        """
        SELECT s.id, s.account_id, s.installation_id, s.device_id, s.method, s.passkey_id, s.ended_at, t.expires_at, a.username \
        FROM access_tokens t JOIN sessions s ON s.id = t.session_id JOIN accounts a ON a.id = s.account_id \
        WHERE t.token_hash = ?
        """)
    private static let insertSession = FixedSQL(
        """
        INSERT INTO sessions (id, account_id, installation_id, device_id, method, created_at, ended_at, end_reason, passkey_id) \
        VALUES (?, ?, ?, ?, ?, ?, NULL, NULL, ?)
        """)
    private static let insertAccessToken = FixedSQL("INSERT INTO access_tokens (token_hash, session_id, expires_at, issued_at) VALUES (?, ?, ?, ?)")
    private static let insertRefreshToken = FixedSQL(
        "INSERT INTO refresh_tokens (token_hash, session_id, expires_at, rotated_at) VALUES (?, ?, ?, NULL)")

    func endSession(_ session: String, reason: String, on db: any SQLDatabase) async throws {
        try await db.run(Self.endSessionByID(now.millisecondsSince1970, reason, session))
        // The session's access tokens stay, so that presenting one answers `session_ended` rather than
        // a bare `unauthenticated`: the app can tell the user they were signed out.
    }

    /// Ends the account's live sessions, all of them or those of one installation or one device, except
    /// `keeping`.
    func endSessions(
        account: String, installationID: String? = nil, device: String? = nil, keeping: String? = nil, reason: String,
        on db: any SQLDatabase
    ) async throws {
        try await db.run(
            Self.endingSessions(
                account: account, installationID: installationID, device: device, keeping: keeping, reason: reason,
                at: now.millisecondsSince1970))
    }

    /// The `UPDATE` of ``endSessions(account:installationID:device:keeping:reason:on:)``. It reads only live
    /// sessions (an index holds just those), however many sessions the account had before.
    static func endingSessions(
        account: String, installationID: String?, device: String?, keeping: String?, reason: String, at now: Int64
    ) -> FixedStatement {
        var sql = endLiveSessions + " AND account_id = ?"
        var binds: [any Encodable & Sendable] = [now, reason, account]
        if let installationID, let device {
            sql += " AND (installation_id = ? OR device_id = ?)"
            binds += [installationID, device]
        } else if let installationID {
            sql += " AND installation_id = ?"
            binds.append(installationID)
        } else if let device {
            sql += " AND device_id = ?"
            binds.append(device)
        }
        if let keeping {
            sql += " AND id <> ?"
            binds.append(keeping)
        }
        return FixedStatement(sql: FixedSQL(sql), binds: binds)
    }

    /// Ends live sessions now for a reason (binds: now, reason); the statements add which sessions.
    private static let endLiveSessions = "UPDATE sessions SET ended_at = ?, end_reason = ? WHERE ended_at IS NULL"
    private static let endSessionByID = FixedSQL(endLiveSessions + " AND id = ?")

    /// Deletes a session's access tokens, which a refresh replaces (indexed by session). Binds: the session.
    static let deleteAccessTokens = FixedSQL("DELETE FROM access_tokens WHERE session_id = ?")
}
