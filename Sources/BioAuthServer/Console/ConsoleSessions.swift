import BioAuthCore
import Foundation
import SQLKit

/// Signed-in operators of the console: a random token in a `__Host-` cookie (the database keeps its SHA-256) and a
/// CSRF token every form carries. A session ends after ``ServerConfiguration/consoleIdleTimeout`` without a request (15
/// minutes) or ``ServerConfiguration/consoleSessionLifetime`` after sign-in (8 hours), at sign-out, and when its operator
/// is disabled.
struct ConsoleSessions: Sendable {
    /// The cookie's name: `__Host-` makes the browser insist on Secure, Path=/ and no Domain.
    static let cookieName = "__Host-bioauth-console"
    let idleTimeout: TimeInterval
    let absoluteTimeout: TimeInterval

    /// A live session, as a request finds it.
    struct Session: Sendable {
        let `operator`: Operator
        let csrfToken: String

        /// Whether the session only reaches the password page: its operator must choose their own password first (a new
        /// operator's first sign-in, or after an admin reset it).
        var isRestricted: Bool { `operator`.mustChangePassword || !`operator`.totpEnrolled }
    }

    let database: any DatabaseExecutor
    let clock: any WallClock
    let random: any RandomSource

    /// The console sessions of `service`'s database, with its configured limits.
    init(service: BioAuthService) {
        self.init(
            database: service.database,
            clock: service.clock,
            random: service.random,
            idleTimeout: service.configuration.consoleIdleTimeout,
            absoluteTimeout: service.configuration.consoleSessionLifetime
        )
    }

    /// Console sessions over `database`, with `clock` for their limits and `random` for their tokens.
    init(
        database: any DatabaseExecutor,
        clock: any WallClock,
        random: any RandomSource,
        idleTimeout: TimeInterval,
        absoluteTimeout: TimeInterval
    ) {
        self.database = database
        self.clock = clock
        self.random = random
        self.idleTimeout = idleTimeout
        self.absoluteTimeout = absoluteTimeout
    }

    private func newSecret() -> String { Base64URL.encode(random.bytes(32)) }

    /// Starts a session for `operator`; returns the cookie's value.
    func start(for operator: Operator) async throws -> String {
        let token = newSecret()
        let now = clock.now.millisecondsSince1970
        let csrf = newSecret()
        try await database.transaction { db in
            try await db.operators.insertSession(tokenHash: BioAuthService.tokenHash(token), operatorID: `operator`.id, csrfToken: csrf, at: now)
        }
        return token
    }

    /// The live session of `token`, its last-seen time moved to now; nil when there is none, it timed out, or its operator
    /// is disabled.
    func session(_ token: String?) async throws -> Session? {
        guard let token, (20...100).contains(token.utf8.count) else { return nil }
        let now = clock.now.millisecondsSince1970
        let idle = now - Int64(idleTimeout * 1000)
        let absolute = now - Int64(absoluteTimeout * 1000)
        return try await database.transaction { db in
            guard
                let touched = try await db.operators.touchSession(
                    tokenHash: BioAuthService.tokenHash(token),
                    now: now,
                    idleSince: idle,
                    startedSince: absolute
                ),
                let found = try await db.operators.findEnabled(id: touched.operatorID)
            else { return nil }
            return Session(operator: found, csrfToken: touched.csrfToken)
        }
    }

    /// Ends the session of `token`.
    func end(_ token: String?) async throws {
        guard let token else { return }
        let now = clock.now.millisecondsSince1970
        try await database.transaction { db in
            try await db.operators.endSession(tokenHash: BioAuthService.tokenHash(token), at: now)
        }
    }
}
