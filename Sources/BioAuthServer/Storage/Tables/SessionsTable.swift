import BioAuthCore
import Foundation
import SQLKit

extension SQLDatabase {
    /// `sessions`, `access_tokens` and `refresh_tokens`: customers' sessions and the hashes of their tokens.
    var sessions: SessionsTable { SessionsTable(db: self) }
}

/// The statements on `sessions`, `access_tokens` and `refresh_tokens`.
struct SessionsTable: Table {
    let db: any SQLDatabase

    /// A session as an access token reaches it, with the token's expiry and whether the session ended.
    struct ByAccessToken: Sendable {
        var session: AuthenticatedSession
        var expiresAt: Date
        var ended: Bool

        /// A row joining the token (`expires_at`), its session and the account (`username`).
        init(row: any SQLRow) throws {
            session = AuthenticatedSession(
                sessionID: try row.decode(column: "id", as: String.self),
                accountID: try row.decode(column: "account_id", as: String.self),
                username: try row.decode(column: "username", as: String.self),
                installationID: try row.decode(column: "installation_id", as: String.self),
                deviceID: try row.decode(column: "device_id", as: String?.self),
                method: SignInMethod(rawValue: try row.decode(column: "method", as: String.self)) ?? .password,
                passkeyID: try row.decode(column: "passkey_id", as: String?.self)
            )
            expiresAt = Date(millisecondsSince1970: try row.decode(column: "expires_at", as: Int64.self))
            ended = try row.decode(column: "ended_at", as: Int64?.self) != nil
        }
    }

    /// The session of the access token whose hash is `tokenHash`.
    func find(accessTokenHash tokenHash: String) async throws -> ByAccessToken? {
        try await db.first(Self.byAccessToken(tokenHash)).map(ByAccessToken.init(row:))
    }

    /// A refresh token with its session.
    struct RefreshToken: Sendable {
        var sessionID: String
        var accountID: String
        var expiresAt: Date
        var rotated: Bool
        var sessionEnded: Bool
    }

    /// The refresh token whose hash is `tokenHash`, rotated or not.
    func find(refreshTokenHash tokenHash: String) async throws -> RefreshToken? {
        guard let row = try await db.first(Self.byRefreshToken(tokenHash)) else { return nil }
        return RefreshToken(
            sessionID: try row.decode(column: "session_id", as: String.self),
            accountID: try row.decode(column: "account_id", as: String.self),
            expiresAt: Date(millisecondsSince1970: try row.decode(column: "expires_at", as: Int64.self)),
            rotated: try row.decode(column: "rotated_at", as: Int64?.self) != nil,
            sessionEnded: try row.decode(column: "ended_at", as: Int64?.self) != nil
        )
    }

    /// What introspection says of a user's access token: the session, how it was opened, and what vouched for it.
    struct Introspected: Sendable {
        /// The session, the token's expiry and whether the session ended.
        var token: ByAccessToken
        var issuedAt: Date?
        /// The biometry of the device whose key opened it, for a biometric sign-in.
        var biometryKind: BiometryKind?
        /// Whether that device has an App Attest key.
        var deviceAttested: Bool
        /// Whether the passkey that opened it is synced, for a passkey sign-in.
        var passkeyBackupEligible: Bool?
        /// The end of that device's cooling-off, when it was bound by a password alone.
        var deviceCoolingOffUntil: Date?
    }

    /// The access token whose hash is `tokenHash`, for introspection.
    func introspect(accessTokenHash tokenHash: String) async throws -> Introspected? {
        guard
            let row = try await db.raw(
                """
                SELECT s.id, s.account_id, s.installation_id, s.method, s.device_id, s.passkey_id, s.ended_at, t.expires_at, t.issued_at, a.username,
                    d.biometry_kind, d.cooling_off_until, (SELECT COUNT(*) FROM app_attest_keys k WHERE k.device_id = s.device_id) AS attested,
                    p.backup_eligible
                FROM access_tokens t JOIN sessions s ON s.id = t.session_id JOIN accounts a ON a.id = s.account_id
                LEFT JOIN devices d ON d.id = s.device_id LEFT JOIN passkeys p ON p.id = s.passkey_id
                WHERE t.token_hash = \(bind: tokenHash)
                """
            ).first()
        else { return nil }
        return Introspected(
            token: try ByAccessToken(row: row),
            issuedAt: Date(storedMilliseconds: try row.decode(column: "issued_at", as: Int64?.self)),
            biometryKind: try row.decode(column: "biometry_kind", as: String?.self).flatMap(BiometryKind.init(rawValue:)),
            deviceAttested: try row.decode(column: "attested", as: Int.self) > 0,
            passkeyBackupEligible: try row.decode(column: "backup_eligible", as: Int?.self).map { $0 != 0 },
            deviceCoolingOffUntil: Date(storedMilliseconds: try row.decode(column: "cooling_off_until", as: Int64?.self))
        )
    }

    /// What a session has proven, as the table of sensitive operations and introspection read it: its sign-in (how,
    /// when, whether the device is attested or the passkey synced), its latest step-up, and what the account could prove
    /// at all (its live devices and passkeys).
    struct Evidence: Sendable {
        var method: SignInMethod
        var createdAt: Date
        var ended: Bool
        var deviceKeyID: String?
        var deviceAttested: Bool
        var passkeyBackupEligible: Bool?
        var stepUpAt: Date?
        /// The level the step-up was recorded at (its device's attestation as it was then).
        var stepUpLevel: Int?
        var stepUpDeviceKeyID: String?
        var stepUpAction: String?
        /// Whether the account has a device that is not revoked.
        var accountHasDevice: Bool
        /// Whether the account has a live device-bound passkey; a live synced one.
        var accountHasBoundPasskey: Bool
        var accountHasSyncedPasskey: Bool
    }

    /// The evidence of session `id`; nil for no such session.
    func evidence(_ id: String) async throws -> Evidence? {
        guard
            let row = try await db.raw(
                """
                SELECT s.method, s.created_at, s.ended_at, d.key_id AS device_key_id, d.attestation, p.backup_eligible,
                    s.step_up_at, s.step_up_level, s.step_up_action, u.key_id AS step_up_key_id,
                    (SELECT COUNT(*) FROM devices l WHERE l.account_id = s.account_id AND l.revoked_at IS NULL) AS live_devices,
                    (SELECT COUNT(*) FROM passkeys q WHERE q.account_id = s.account_id AND q.revoked_at IS NULL AND q.backup_eligible = 0)
                        AS bound_passkeys,
                    (SELECT COUNT(*) FROM passkeys q WHERE q.account_id = s.account_id AND q.revoked_at IS NULL AND q.backup_eligible <> 0)
                        AS synced_passkeys
                FROM sessions s LEFT JOIN devices d ON d.id = s.device_id LEFT JOIN devices u ON u.id = s.step_up_device_id
                LEFT JOIN passkeys p ON p.id = s.passkey_id
                WHERE s.id = \(bind: id)
                """
            ).first()
        else { return nil }
        return Evidence(
            method: SignInMethod(rawValue: try row.decode(column: "method", as: String.self)) ?? .password,
            createdAt: Date(millisecondsSince1970: try row.decode(column: "created_at", as: Int64.self)),
            ended: try row.decode(column: "ended_at", as: Int64?.self) != nil,
            deviceKeyID: try row.decode(column: "device_key_id", as: String?.self),
            deviceAttested: (try row.decode(column: "attestation", as: String?.self)).map { $0 != "none" } ?? false,
            passkeyBackupEligible: try row.decode(column: "backup_eligible", as: Int?.self).map { $0 != 0 },
            stepUpAt: Date(storedMilliseconds: try row.decode(column: "step_up_at", as: Int64?.self)),
            stepUpLevel: try row.decode(column: "step_up_level", as: Int?.self),
            stepUpDeviceKeyID: try row.decode(column: "step_up_key_id", as: String?.self),
            stepUpAction: try row.decode(column: "step_up_action", as: String?.self),
            accountHasDevice: try row.decode(column: "live_devices", as: Int.self) > 0,
            accountHasBoundPasskey: try row.decode(column: "bound_passkeys", as: Int.self) > 0,
            accountHasSyncedPasskey: try row.decode(column: "synced_passkeys", as: Int.self) > 0
        )
    }

    /// Records a step-up of live session `id` by `device`'s key (nil: a passkey's): whether the session was live.
    func recordStepUp(_ id: String, at: Int64, level: Int, device: String?, action: String) async throws -> Bool {
        try await db.raw(
            """
            UPDATE sessions SET step_up_at = \(bind: at), step_up_level = \(bind: level), step_up_device_id = \(bind: device),
                step_up_action = \(bind: action)
            WHERE id = \(bind: id) AND ended_at IS NULL RETURNING id
            """
        ).first() != nil
    }

    /// A live session as support sees it.
    struct Live: Sendable {
        var id: String
        var installationID: String
        var method: String
        var deviceID: String?
        var passkeyID: String?
        var createdAt: Date
    }

    /// The account that holds session `id`, whoever's it is: for support's search by an id a customer reads out.
    func owner(of id: String) async throws -> String? {
        try await db.select().column("account_id").from("sessions").where("id", .equal, id).first()?.decode(column: "account_id", as: String.self)
    }

    /// The account's live sessions, newest first.
    func live(account: String) async throws -> [Live] {
        try await db.select().columns("id", "installation_id", "method", "device_id", "passkey_id", "created_at").from("sessions")
            .where("account_id", .equal, account).where("ended_at", .is, SQLLiteral.null).orderBy("created_at", .descending).all()
            .map { row in
                Live(
                    id: try row.decode(column: "id", as: String.self),
                    installationID: try row.decode(column: "installation_id", as: String.self),
                    method: try row.decode(column: "method", as: String.self),
                    deviceID: try row.decode(column: "device_id", as: String?.self),
                    passkeyID: try row.decode(column: "passkey_id", as: String?.self),
                    createdAt: Date(millisecondsSince1970: try row.decode(column: "created_at", as: Int64.self))
                )
            }
    }

    /// Stores a new session.
    func insert(
        _ id: String,
        account: String,
        installationID: String,
        device: String?,
        method: SignInMethod,
        passkey: String?,
        at: Int64
    ) async throws {
        try await db.run(Self.insertSession(id, account, installationID, device, method.rawValue, at, passkey))
    }

    /// A session to start, with the hashes of its first tokens.
    struct Start: Sendable {
        var id: String
        var account: String
        var installationID: String
        var device: String?
        var method: SignInMethod
        var passkey: String?
        var accessTokenHash: String
        var accessTokenExpiresAt: Int64
        var refreshTokenHash: String
        var refreshTokenExpiresAt: Int64
    }

    /// Starts `session` with its two tokens, ending (for `reason`) the account's live sessions on the same installation.
    ///
    /// On PostgreSQL this is one statement: its parts share one snapshot, so the sessions it ends are those live before it,
    /// never the new one. The caller takes the account's row first (`AccountsTable.guardSessions(account:engine:)`), so
    /// that snapshot is taken after any unit of work that started or ended the account's sessions has committed. On SQLite,
    /// which runs one unit of work at a time, the same four statements one after another.
    func start(_ session: Start, replacing reason: String, at now: Int64, engine: DatabaseDialect) async throws {
        guard engine == .sqlite else {
            try await db.run(
                Self.startReplacing(
                    now,
                    reason,
                    session.account,
                    session.installationID,
                    session.id,
                    session.account,
                    session.installationID,
                    session.device,
                    session.method.rawValue,
                    now,
                    session.passkey,
                    session.accessTokenHash,
                    session.id,
                    session.accessTokenExpiresAt,
                    now,
                    session.refreshTokenHash,
                    session.id,
                    session.refreshTokenExpiresAt
                )
            )
            return
        }
        try await endLive(account: session.account, installationID: session.installationID, device: nil, keeping: nil, reason: reason, at: now)
        try await insert(
            session.id,
            account: session.account,
            installationID: session.installationID,
            device: session.device,
            method: session.method,
            passkey: session.passkey,
            at: now
        )
        try await insertAccessToken(hash: session.accessTokenHash, session: session.id, expiresAt: session.accessTokenExpiresAt, issuedAt: now)
        try await insertRefreshToken(hash: session.refreshTokenHash, session: session.id, expiresAt: session.refreshTokenExpiresAt)
    }

    /// Stores the hash of a new access token of `session`.
    func insertAccessToken(hash: String, session: String, expiresAt: Int64, issuedAt: Int64) async throws {
        try await db.run(Self.insertAccessTokenSQL(hash, session, expiresAt, issuedAt))
    }

    /// Stores the hash of a new refresh token of `session`.
    func insertRefreshToken(hash: String, session: String, expiresAt: Int64) async throws {
        try await db.run(Self.insertRefreshTokenSQL(hash, session, expiresAt))
    }

    /// Marks a refresh token used (rotated) at `at`.
    func markRotated(refreshTokenHash hash: String, at: Int64) async throws {
        try await db.update("refresh_tokens").set("rotated_at", to: at).where("token_hash", .equal, hash).run()
    }

    /// Deletes the session's access tokens (a refresh replaces them).
    func deleteAccessTokens(session: String) async throws {
        try await db.run(Self.deleteAccessTokensSQL(session))
    }

    /// Ends the session `id` if it is live.
    func end(_ id: String, reason: String, at: Int64) async throws {
        try await db.run(Self.endByID(at, reason, id))
    }

    /// Ends the session `id` of `account` if it is live: whether it was.
    func endLive(_ id: String, account: String, reason: String, at: Int64) async throws -> Bool {
        try await db.raw(
            """
            UPDATE sessions SET ended_at = \(bind: at), end_reason = \(bind: reason)
            WHERE id = \(bind: id) AND account_id = \(bind: account) AND ended_at IS NULL RETURNING id
            """
        ).first() != nil
    }

    /// Ends the account's live sessions, all of them or those of one installation or one device, except `keeping`.
    func endLive(account: String, installationID: String?, device: String?, keeping: String?, reason: String, at: Int64) async throws {
        try await db.run(Self.ending(account: account, installationID: installationID, device: device, keeping: keeping, reason: reason, at: at))
    }

    /// Ends the live sessions the passkey opened, except `keeping`.
    func endLive(passkey: String, keeping: String?, reason: String, at: Int64) async throws {
        var ending = db.update("sessions").set("ended_at", to: at).set("end_reason", to: reason)
            .where("passkey_id", .equal, passkey).where("ended_at", .is, SQLLiteral.null)
        if let keeping { ending = ending.where("id", .notEqual, keeping) }
        try await ending.run()
    }

    /// The `UPDATE` of ``endLive(account:installationID:device:keeping:reason:at:)``. It reads only live sessions (an index
    /// holds just those), however many sessions the account had before.
    static func ending(account: String, installationID: String?, device: String?, keeping: String?, reason: String, at now: Int64) -> FixedStatement {
        var binds: [any Encodable & Sendable] = [now, reason, account]
        var which = 0
        if let installationID {
            binds.append(installationID)
            which |= 1
        }
        if let device {
            binds.append(device)
            which |= 2
        }
        if let keeping {
            binds.append(keeping)
            which |= 4
        }
        return FixedStatement(sql: endingVariants[which], binds: binds)
    }

    /// ``ending(account:installationID:device:keeping:reason:at:)``'s text for each choice of conditions (bit 0: the
    /// installation, bit 1: the device, bit 2: a session kept), made once: a ``FixedSQL`` built on every call would hash
    /// its text for its prepared name on every sign-in.
    private static let endingVariants: [FixedSQL] = (0..<8).map { which in
        var sql = endLiveSessions + " AND account_id = ?"
        switch which & 3 {
        case 3: sql += " AND (installation_id = ? OR device_id = ?)"
        case 1: sql += " AND installation_id = ?"
        case 2: sql += " AND device_id = ?"
        default: break
        }
        if which & 4 != 0 { sql += " AND id <> ?" }
        return FixedSQL(sql)
    }

    // The statements of every authenticated request and every sign-in (FixedSQL: no builder serialized per call).
    static let byAccessToken = FixedSQL(
        """
        SELECT s.id, s.account_id, s.installation_id, s.device_id, s.method, s.passkey_id, s.ended_at, t.expires_at, a.username \
        FROM access_tokens t JOIN sessions s ON s.id = t.session_id JOIN accounts a ON a.id = s.account_id \
        WHERE t.token_hash = ?
        """
    )
    static let byRefreshToken = FixedSQL(
        """
        SELECT r.session_id, r.expires_at, r.rotated_at, s.account_id, s.ended_at \
        FROM refresh_tokens r JOIN sessions s ON s.id = r.session_id WHERE r.token_hash = ?
        """
    )
    static let insertSession = FixedSQL(
        """
        INSERT INTO sessions (id, account_id, installation_id, device_id, method, created_at, ended_at, end_reason, passkey_id) \
        VALUES (?, ?, ?, ?, ?, ?, NULL, NULL, ?)
        """
    )
    static let insertAccessTokenSQL = FixedSQL("INSERT INTO access_tokens (token_hash, session_id, expires_at, issued_at) VALUES (?, ?, ?, ?)")
    static let insertRefreshTokenSQL = FixedSQL(
        "INSERT INTO refresh_tokens (token_hash, session_id, expires_at, rotated_at) VALUES (?, ?, ?, NULL)"
    )
    /// ``start(_:replacing:at:engine:)`` on PostgreSQL: the installation's live sessions end, the new one and its tokens
    /// are stored (SQLite has no data-modifying `WITH`).
    static let startReplacing = FixedSQL(
        """
        WITH ended AS (\(endLiveSessions) AND account_id = ? AND installation_id = ?), \
        started AS (\(insertSession.text)), \
        access AS (\(insertAccessTokenSQL.text)) \
        \(insertRefreshTokenSQL.text)
        """
    )
    /// Ends live sessions now for a reason (binds: now, reason); the statements add which sessions.
    private static let endLiveSessions = "UPDATE sessions SET ended_at = ?, end_reason = ? WHERE ended_at IS NULL"
    static let endByID = FixedSQL(endLiveSessions + " AND id = ?")
    /// Deletes a session's access tokens, which a refresh replaces (indexed by session). Binds: the session.
    static let deleteAccessTokensSQL = FixedSQL("DELETE FROM access_tokens WHERE session_id = ?")

    /// PostgreSQL's own statement of every sign-in, with sample values: `QueryPlanTests` checks its plan there.
    static var postgresHotStatements: [FixedStatement] {
        [
            startReplacing(
                Int64(1),
                "replaced",
                "a",
                "i",
                "s",
                "a",
                "i",
                "d",
                "biometric",
                Int64(1),
                nil as String?,
                "h",
                "s",
                Int64(2),
                Int64(1),
                "r",
                "s",
                Int64(3)
            )
        ]
    }

    /// Run on every authenticated request, sign-in or refresh, with sample values: `QueryPlanTests` checks that each
    /// finds its rows through an index.
    static var hotStatements: [FixedStatement] {
        let whichSessions: [(installation: String?, device: String?, keeping: String?)] = [
            ("i", nil, nil), ("i", nil, "k"), (nil, "d", nil), (nil, "d", "k"), ("i", "d", nil), ("i", "d", "k"),
        ]
        var statements = [byAccessToken("h"), byRefreshToken("h"), endByID(Int64(1), "signed_out", "s"), deleteAccessTokensSQL("s")]
        for which in whichSessions {
            statements.append(
                ending(account: "a", installationID: which.installation, device: which.device, keeping: which.keeping, reason: "replaced", at: 1)
            )
        }
        return statements
    }
}

// MARK: Retention

extension SessionsTable {
    /// Access tokens that expired before `cutoff`. A token whose session ended before then goes with its session
    /// (``purgeEndedSessions(before:now:)``): found by expiry alone, a batch is a range of an index.
    static func purgeExpiredAccessTokens(before cutoff: Int64) -> PurgeRule {
        PurgeRule(table: "access_tokens", key: "token_hash", condition: "expires_at < \(bind: cutoff)")
    }

    /// Refresh tokens that expired before `cutoff`; as ``purgeExpiredAccessTokens(before:)``.
    static func purgeExpiredRefreshTokens(before cutoff: Int64) -> PurgeRule {
        PurgeRule(table: "refresh_tokens", key: "token_hash", condition: "expires_at < \(bind: cutoff)")
    }

    /// A session's tokens, deleted with it: all it still has (the expired-token rules ran first; a dry run counts those
    /// they leave, the ones still valid at `cutoff`).
    private static func tokens(leftAt cutoff: Int64) -> [PurgeRule.Dependent] {
        ["access_tokens", "refresh_tokens"].map {
            PurgeRule.Dependent(table: $0, columns: "session_id", leftByEarlierRules: "expires_at >= \(bind: cutoff)")
        }
    }

    /// No challenge bound to the session is live at `now`: looked up by the session, the expiry compared as a difference
    /// (which no index serves), as in ``ChallengesTable/take``. Written `c.expires_at >= now`, PostgreSQL compared each
    /// session with every live challenge through the expiry index once the purge had emptied the challenges and autovacuum
    /// analyzed them (a batch of 1 000 sessions against 2 000 live challenges: 332 ms, against 2 ms).
    private static func noLiveChallenge(_ now: Int64) -> SQLQueryString {
        "NOT EXISTS (SELECT 1 FROM challenges c WHERE c.session_id = sessions.id AND c.expires_at - \(bind: now) >= 0)"
    }

    /// Sessions that ended before `cutoff`, with the tokens they still have (a refresh token still valid when a later
    /// sign-in replaced its session, say), unless a challenge bound to one is live at `now`. A batch is a range of the
    /// index of ended sessions. The audit log keeps their ids.
    ///
    /// Their tokens used to go first, by a rule that asked of every token whether its session had ended: no index answers
    /// that, so each batch read the token table from its start, and on a database that keeps 30 days of tokens a day's
    /// backlog took time growing with the square of its size (docs/PERFORMANCE.md, "Retention at scale").
    static func purgeEndedSessions(before cutoff: Int64, now: Int64) -> PurgeRule {
        PurgeRule(
            table: "sessions",
            key: "id",
            condition: "ended_at < \(bind: cutoff) AND \(noLiveChallenge(now))",
            dependents: tokens(leftAt: cutoff)
        )
    }

    /// Sessions that never ended but were abandoned: started before `cutoff`, with every token expired before then, and
    /// no challenge live at `now`. The expired-token rules took their tokens; any left go with them. A batch reads the
    /// index of live sessions whole (no index orders them by age); a purge finds few, so it is about one batch a run.
    static func purgeAbandonedSessions(before cutoff: Int64, now: Int64) -> PurgeRule {
        PurgeRule(
            table: "sessions",
            key: "id",
            condition: """
                ended_at IS NULL AND created_at < \(bind: cutoff) \
                AND NOT EXISTS (SELECT 1 FROM access_tokens a WHERE a.session_id = sessions.id AND a.expires_at >= \(bind: cutoff)) \
                AND NOT EXISTS (SELECT 1 FROM refresh_tokens r WHERE r.session_id = sessions.id AND r.expires_at >= \(bind: cutoff)) \
                AND \(noLiveChallenge(now))
                """,
            dependents: tokens(leftAt: cutoff)
        )
    }
}
