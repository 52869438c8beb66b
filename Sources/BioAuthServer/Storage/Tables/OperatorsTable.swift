import Foundation
import SQLKit

extension SQLDatabase {
    /// `operators` and `operator_sessions`: the bank's support staff, their credentials and their console sessions.
    var operators: OperatorsTable { OperatorsTable(db: self) }
}

/// The statements on `operators` and `operator_sessions`.
struct OperatorsTable: Table {
    let db: any SQLDatabase

    /// An operator with what signing in checks: the password hash, the enrolled and pending TOTP secrets, and the last
    /// step a code was accepted in.
    struct Credentials: Sendable {
        var `operator`: Operator
        var passwordHash: String
        var totpSecret: String?
        var pendingTOTPSecret: String?
        var lastStep: Int64?
    }

    /// Whether an operator, enabled or not, has this name.
    func exists(name: String) async throws -> Bool {
        try await db.select().column("id").from("operators").where("name", .equal, name).first() != nil
    }

    /// Stores a new operator with no second factor.
    func insert(_ new: Operators.NewOperator, createdBy: String?) async throws {
        try await db.insert(into: "operators")
            .columns(
                "id",
                "name",
                "role",
                "password_hash",
                "totp_secret",
                "totp_pending_secret",
                "totp_last_step",
                "failed_attempts",
                "locked_until",
                "created_at",
                "created_by",
                "disabled_at",
                "must_change_password"
            )
            .values(
                SQLBind(new.id),
                SQLBind(new.name),
                SQLBind(new.role.rawValue),
                SQLBind(new.hash),
                SQLBind(String?.none),
                SQLBind(String?.none),
                SQLBind(Int64?.none),
                SQLBind(0),
                SQLBind(Int64?.none),
                SQLBind(new.createdAt.millisecondsSince1970),
                SQLBind(createdBy),
                SQLBind(Int64?.none),
                SQLBind(new.mustChangePassword ? 1 : 0)
            )
            .run()
    }

    /// Every operator, by name.
    func list() async throws -> [Operator] {
        try await db.raw("SELECT \(unsafeRaw: Self.columns) FROM operators ORDER BY name").all().map(Self.operator)
    }

    /// The operator `name` with their credentials, enabled or not.
    func credentials(name: String) async throws -> Credentials? {
        try await credentials(SQLQueryString("name = \(bind: name)"))
    }

    /// The operator `id` with their credentials, enabled or not.
    func credentials(id: String) async throws -> Credentials? {
        try await credentials(SQLQueryString("id = \(bind: id)"))
    }

    private func credentials(_ condition: SQLQueryString) async throws -> Credentials? {
        guard
            let row = try await db.raw(
                "SELECT \(unsafeRaw: Self.columns), password_hash, totp_secret, totp_pending_secret, totp_last_step FROM operators WHERE \(condition)"
            ).first()
        else { return nil }
        return Credentials(
            operator: try Self.operator(row),
            passwordHash: try row.decode(column: "password_hash", as: String.self),
            totpSecret: try row.decode(column: "totp_secret", as: String?.self),
            pendingTOTPSecret: try row.decode(column: "totp_pending_secret", as: String?.self),
            lastStep: try row.decode(column: "totp_last_step", as: Int64?.self)
        )
    }

    /// Records `step` as the last one a code of operator `id` was accepted in.
    /// False when a code of this step or a later one was accepted already (two requests raced with one code): the step
    /// is compared in the statement itself.
    func recordStep(_ id: String, step: Int64) async throws -> Bool {
        try await db.raw(
            """
            UPDATE operators SET totp_last_step = \(bind: step)
            WHERE id = \(bind: id) AND (totp_last_step IS NULL OR totp_last_step < \(bind: step)) RETURNING id
            """
        ).first() != nil
    }

    /// The enabled operator `id`.
    func findEnabled(id: String) async throws -> Operator? {
        try await db.raw("SELECT \(unsafeRaw: Self.columns) FROM operators WHERE id = \(bind: id) AND disabled_at IS NULL").first().map(Self.operator)
    }

    /// The operator `name`, enabled or not.
    func find(name: String) async throws -> Operator? {
        try await db.raw("SELECT \(unsafeRaw: Self.columns) FROM operators WHERE name = \(bind: name)").first().map(Self.operator)
    }

    /// Marks the enabled operator `name` disabled at `at`; false when there is none.
    func markDisabled(name: String, at: Int64) async throws -> Bool {
        !(try await db.update("operators").set("disabled_at", to: at).where("name", .equal, name).where("disabled_at", .is, SQLLiteral.null)
            .returning("id").all()).isEmpty
    }

    /// Marks the disabled operator `name` enabled again; false when there is none.
    func markEnabled(name: String) async throws -> Bool {
        !(try await db.update("operators").set("disabled_at", to: SQLLiteral.null).where("name", .equal, name)
            .where("disabled_at", .isNot, SQLLiteral.null).returning("id").all()).isEmpty
    }

    /// Gives operator `id` the role `role`.
    func setRole(_ id: String, role: OperatorRole) async throws {
        try await db.update("operators").set("role", to: role.rawValue).where("id", .equal, id).run()
    }

    /// Stores `hash` as operator `id`'s password; with `mustChange`, they must choose another at their next sign-in.
    func setPassword(_ id: String, hash: String, mustChange: Bool) async throws {
        try await db.update("operators").set("password_hash", to: hash).set("must_change_password", to: mustChange ? 1 : 0)
            .where("id", .equal, id).run()
    }

    /// Forgets operator `id`'s TOTP keys, enrolled and pending: they enroll again at their next sign-in. The last step a
    /// code was accepted in stays, so no code seen before is accepted again.
    func clearTOTP(_ id: String) async throws {
        try await db.update("operators").set("totp_secret", to: SQLLiteral.null).set("totp_pending_secret", to: SQLLiteral.null)
            .where("id", .equal, id).run()
    }

    /// Ends every live console session of operator `id`, but the one whose token's hash is `keeping`.
    func endSessions(operatorID id: String, keeping: String? = nil, at: Int64) async throws {
        try await db.update("operator_sessions").set("ended_at", to: at).where("operator_id", .equal, id)
            .where("ended_at", .is, SQLLiteral.null).where("token_hash", .notEqual, keeping ?? "").run()
    }

    /// Keeps `secret` as the operator's TOTP secret to enroll.
    func setPendingTOTPSecret(_ id: String, secret: String) async throws {
        try await db.update("operators").set("totp_pending_secret", to: secret).where("id", .equal, id).run()
    }

    /// Every operator's stored TOTP keys (sealed, or in clear from an earlier version), for sealing at start-up.
    func totpKeys() async throws -> [(id: String, secret: String?, pending: String?)] {
        try await db.select().columns("id", "totp_secret", "totp_pending_secret").from("operators")
            .where { $0.where("totp_secret", .isNot, SQLLiteral.null).orWhere("totp_pending_secret", .isNot, SQLLiteral.null) }
            .all()
            .map {
                (
                    try $0.decode(column: "id", as: String.self), try $0.decode(column: "totp_secret", as: String?.self),
                    try $0.decode(column: "totp_pending_secret", as: String?.self)
                )
            }
    }

    /// Stores operator `id`'s TOTP keys as `secret` and `pending`, if they are still `old` (another instance may have
    /// sealed them first).
    func replaceTOTPKeys(_ id: String, secret: String?, pending: String?, old: (secret: String?, pending: String?)) async throws {
        try await db.raw(
            """
            UPDATE operators SET totp_secret = \(bind: secret), totp_pending_secret = \(bind: pending)
            WHERE id = \(bind: id) AND totp_secret IS NOT DISTINCT FROM \(bind: old.secret)
                AND totp_pending_secret IS NOT DISTINCT FROM \(bind: old.pending)
            """
        ).run()
    }

    /// Enrolls `secret` (if it was pending), records `step` as the last one a code was accepted in and `at` as the last
    /// sign-in. (Failures are counted in `rate_limits`, by name and address; the row's `failed_attempts` and
    /// `locked_until` are no longer used.) False, changing nothing, when a code of this step or a later one was accepted
    /// already (see ``recordStep(_:step:)``).
    func recordSignIn(_ id: String, secret: String, step: Int64, at: Int64) async throws -> Bool {
        try await db.raw(
            """
            UPDATE operators SET totp_secret = \(bind: secret), totp_pending_secret = NULL, totp_last_step = \(bind: step),
                last_sign_in_at = \(bind: at)
            WHERE id = \(bind: id) AND (totp_last_step IS NULL OR totp_last_step < \(bind: step)) RETURNING id
            """
        ).first() != nil
    }

    // MARK: Console sessions

    /// Stores a new console session of `operatorID` under its token's hash.
    func insertSession(tokenHash: String, operatorID: String, csrfToken: String, at: Int64) async throws {
        try await db.insert(into: "operator_sessions").columns("token_hash", "operator_id", "csrf_token", "created_at", "last_seen_at", "ended_at")
            .values(SQLBind(tokenHash), SQLBind(operatorID), SQLBind(csrfToken), SQLBind(at), SQLBind(at), SQLBind(Int64?.none)).run()
    }

    /// Moves the live session's last-seen time to `now`, if it was seen after `idleSince` and started after `startedSince`;
    /// returns its operator and CSRF token.
    func touchSession(tokenHash: String, now: Int64, idleSince: Int64, startedSince: Int64) async throws -> (operatorID: String, csrfToken: String)? {
        guard
            let row = try await db.raw(
                """
                UPDATE operator_sessions SET last_seen_at = \(bind: now)
                WHERE token_hash = \(bind: tokenHash) AND ended_at IS NULL AND last_seen_at > \(bind: idleSince) AND created_at > \(bind: startedSince)
                RETURNING operator_id, csrf_token
                """
            ).first()
        else { return nil }
        return (try row.decode(column: "operator_id", as: String.self), try row.decode(column: "csrf_token", as: String.self))
    }

    /// Ends the live session whose token's hash is `tokenHash`.
    func endSession(tokenHash: String, at: Int64) async throws {
        try await db.update("operator_sessions").set("ended_at", to: at).where("token_hash", .equal, tokenHash).where(
            "ended_at",
            .is,
            SQLLiteral.null
        )
        .run()
    }

    private static let columns =
        "id, name, role, created_at, created_by, disabled_at, totp_secret IS NOT NULL AS enrolled, must_change_password, last_sign_in_at"

    private static func `operator`(_ row: any SQLRow) throws -> Operator {
        Operator(
            id: try row.decode(column: "id", as: String.self),
            name: try row.decode(column: "name", as: String.self),
            role: OperatorRole(rawValue: try row.decode(column: "role", as: String.self)) ?? .viewer,
            totpEnrolled: try row.decode(column: "enrolled", as: Bool.self),
            createdAt: Date(millisecondsSince1970: try row.decode(column: "created_at", as: Int64.self)),
            createdBy: try row.decode(column: "created_by", as: String?.self),
            disabledAt: Date(storedMilliseconds: try row.decode(column: "disabled_at", as: Int64?.self)),
            mustChangePassword: try row.decode(column: "must_change_password", as: Int.self) != 0,
            lastSignInAt: Date(storedMilliseconds: try row.decode(column: "last_sign_in_at", as: Int64?.self))
        )
    }
}

// MARK: Retention

extension OperatorsTable {
    /// Console sessions over before `cutoff`: signed out, idle since `idleCutoff`, or started before `absoluteCutoff`.
    /// Nothing refers to them; the audit log names the operator.
    static func purgeSessions(endedBefore cutoff: Int64, idleSince idleCutoff: Int64, startedBefore absoluteCutoff: Int64) -> PurgeRule {
        PurgeRule(
            table: "operator_sessions",
            key: "token_hash",
            condition: "ended_at < \(bind: cutoff) OR last_seen_at < \(bind: idleCutoff) OR created_at < \(bind: absoluteCutoff)"
        )
    }
}
