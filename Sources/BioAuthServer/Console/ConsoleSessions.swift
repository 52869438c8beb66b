import BioAuthCore
import Foundation
import SQLKit

/// Signed-in operators of the console: a random token in a `__Host-` cookie (the database keeps its SHA-256) and a
/// CSRF token every form carries. A session ends after 15 minutes without a request or 8 hours after sign-in, at sign-out,
/// and when its operator is disabled.
struct ConsoleSessions: Sendable {
    /// The cookie's name: `__Host-` makes the browser insist on Secure, Path=/ and no Domain.
    static let cookieName = "__Host-bioauth-console"
    static let idleTimeout: TimeInterval = 15 * 60
    static let absoluteTimeout: TimeInterval = 8 * 3600

    /// A live session, as a request finds it.
    struct Session: Sendable {
        let `operator`: Operator
        let csrfToken: String
    }

    let service: BioAuthService

    /// Starts a session for `operator`; returns the cookie's value.
    func start(for operator: Operator) async throws -> String {
        let token = service.newSecret()
        let now = service.now.millisecondsSince1970
        let csrf = service.newSecret()
        try await service.database.transaction { db in
            try await db.raw(
                """
                INSERT INTO operator_sessions (token_hash, operator_id, csrf_token, created_at, last_seen_at, ended_at)
                VALUES (\(bind: BioAuthService.tokenHash(token)), \(bind: `operator`.id), \(bind: csrf), \(bind: now), \(bind: now), NULL)
                """
            ).run()
        }
        return token
    }

    /// The live session of `token`, its last-seen time moved to now; nil when there is none, it timed out, or its operator
    /// is disabled.
    func session(_ token: String?) async throws -> Session? {
        guard let token, (20...100).contains(token.utf8.count) else { return nil }
        let now = service.now.millisecondsSince1970
        let idle = now - Int64(Self.idleTimeout * 1000), absolute = now - Int64(Self.absoluteTimeout * 1000)
        return try await service.database.transaction { db in
            guard let row = try await db.raw(
                """
                UPDATE operator_sessions SET last_seen_at = \(bind: now)
                WHERE token_hash = \(bind: BioAuthService.tokenHash(token)) AND ended_at IS NULL
                    AND last_seen_at > \(bind: idle) AND created_at > \(bind: absolute)
                RETURNING operator_id, csrf_token
                """
            ).first() else { return nil }
            let operatorID = try row.decode(column: "operator_id", as: String.self)
            guard let found = try await db.raw(
                "SELECT id, name, role, created_at, created_by, totp_secret IS NOT NULL AS enrolled FROM operators WHERE id = \(bind: operatorID) AND disabled_at IS NULL"
            ).first(), let role = OperatorRole(rawValue: try found.decode(column: "role", as: String.self)) else { return nil }
            return Session(
                operator: Operator(
                    id: operatorID, name: try found.decode(column: "name", as: String.self), role: role,
                    totpEnrolled: try found.decode(column: "enrolled", as: Bool.self), lockedUntil: nil,
                    createdAt: Date(millisecondsSince1970: try found.decode(column: "created_at", as: Int64.self)),
                    createdBy: try found.decode(column: "created_by", as: String?.self), disabledAt: nil),
                csrfToken: try row.decode(column: "csrf_token", as: String.self))
        }
    }

    /// Ends the session of `token`.
    func end(_ token: String?) async throws {
        guard let token else { return }
        let now = service.now.millisecondsSince1970
        try await service.database.transaction { db in
            try await db.raw(
                "UPDATE operator_sessions SET ended_at = \(bind: now) WHERE token_hash = \(bind: BioAuthService.tokenHash(token)) AND ended_at IS NULL"
            ).run()
        }
    }
}
