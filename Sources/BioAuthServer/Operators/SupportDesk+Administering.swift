import BioAuthCore
import CoreMetrics
import Foundation
import Logging
import SQLKit

/// What only admins do: operators, payees, service clients, and what they read of webhooks and operator changes.
extension SupportDesk {

    /// Makes an operator on behalf of the signed-in admin `by`; audited with the admin's id. They choose their own
    /// password at their first sign-in. A bad or taken name, or a password too short or long, is ``SupportError/invalid(_:)``.
    public func createOperator(name: String, role: OperatorRole, password: String, by admin: Operator) async throws -> Operator {
        try Self.requireAdmin(admin)
        let operators = self.operators
        let recorder = self.recorder
        // Hashed before the unit of work; stored and audited in one, so neither stands without the other.
        let new: Operators.NewOperator
        do { new = try await operators.prepare(name: name, role: role, password: password) } catch let error as OperatorError {
            throw SupportError.invalid(error.description)
        }
        return try await database.transaction { db in
            let made: Operator
            do { made = try await operators.insert(new, createdBy: admin.id, on: db) } catch let error as OperatorError {
                throw SupportError.invalid(error.description)
            }
            try await recorder.audit(
                .operatorCreated,
                succeeded: true,
                account: nil,
                operator: SupportAction(operatorID: admin.id, reason: "\(made.id) \(role.rawValue)"),
                on: db
            )
            return made
        }
    }

    /// Disables an operator on behalf of `admin` (not themself); their console sessions end at their next request. They
    /// keep their name, which no one else can take, so the audit log still names them.
    public func disableOperator(name: String, reason: String = "", by admin: Operator) async throws {
        try await administerOperator(name, reason: reason, kind: .operatorDisabled, optionalReason: true, by: admin) { target, db in
            guard try await db.operators.markDisabled(name: target.name, at: clock.now.millisecondsSince1970) else {
                throw SupportError.invalid("\(target.name) is already disabled")
            }
            return ""
        }
    }

    /// Enables a disabled operator again on behalf of `admin`; audited with the reason.
    public func enableOperator(name: String, reason: String, by admin: Operator) async throws {
        try await administerOperator(name, reason: reason, kind: .operatorEnabled, by: admin) { target, db in
            guard try await db.operators.markEnabled(name: target.name) else { throw SupportError.invalid("\(target.name) is not disabled") }
            return ""
        }
    }

    /// Gives an operator another role on behalf of `admin` (not themself: an admin cannot demote the last admin by
    /// mistake); it applies from their next request. Audited with the old and new roles and the reason.
    public func changeOperatorRole(name: String, to role: OperatorRole, reason: String, by admin: Operator) async throws {
        try await administerOperator(name, reason: reason, kind: .operatorRoleChanged, by: admin) { target, db in
            guard target.role != role else { throw SupportError.invalid("\(target.name) is already \(role.rawValue)") }
            try await db.operators.setRole(target.id, role: role)
            return "\(target.role.rawValue) → \(role.rawValue)"
        }
    }

    /// Resets an operator's password to `temporaryPassword` on behalf of `admin`: their console sessions end, and at their
    /// next sign-in (with it and their code) they must choose their own before anything else. Audited.
    public func resetOperatorPassword(name: String, temporaryPassword: String, reason: String, by admin: Operator) async throws {
        let hash: String
        do { hash = try await operators.hashed(temporaryPassword) } catch let error as OperatorError { throw SupportError.invalid(error.description) }
        let at = clock.now.millisecondsSince1970
        try await administerOperator(name, reason: reason, kind: .operatorPasswordReset, by: admin) { target, db in
            try await db.operators.setPassword(target.id, hash: hash, mustChange: true)
            try await db.operators.endSessions(operatorID: target.id, at: at)
            return ""
        }
    }

    /// Resets an operator's second factor on behalf of `admin` (a lost phone): their console sessions end and they enroll
    /// a new key at their next sign-in; no code of the old key is accepted again. Audited.
    public func resetOperatorTOTP(name: String, reason: String, by admin: Operator) async throws {
        let at = clock.now.millisecondsSince1970
        try await administerOperator(name, reason: reason, kind: .operatorTOTPReset, by: admin) { target, db in
            try await db.operators.clearTOTP(target.id)
            try await db.operators.endSessions(operatorID: target.id, at: at)
            return ""
        }
    }

    /// The enabled operator `name`, for the command line's `--operator` (who acts).
    public func enabledOperator(named name: String) async throws -> Operator {
        let found = try await database.transaction { db in try await db.operators.find(name: name) }
        guard let found, found.disabledAt == nil else { throw SupportError.notAllowed("no enabled operator named \(name)") }
        return found
    }

    /// What the admin page lists of operators' lifecycle: the most recent audited changes of operators, newest first.
    public struct OperatorChange: Sendable {
        /// When.
        public let occurredAt: Date
        /// `operator_created`, `operator_disabled`, `operator_enabled`, `operator_role_changed`, `operator_password_reset`,
        /// `operator_totp_reset` or `operator_password_changed`.
        public let kind: String
        /// Who did it (an admin, or the operator for their own password).
        public let operatorID: String
        /// The operator it concerns, what changed and why, as recorded.
        public let reason: String
    }

    /// The `limit` most recent operator changes, newest first.
    public func operatorChanges(limit: Int = 50) async throws -> [OperatorChange] {
        try await database.transaction { db in
            try await db.auditEvents.operatorChanges(limit: limit).map { event in
                OperatorChange(occurredAt: event.occurredAt, kind: event.kind, operatorID: event.operatorID ?? "", reason: event.reason ?? "")
            }
        }
    }

    /// An admin's change of another operator: the admin's role and the reason checked, the operator looked up by name,
    /// `change` made (it returns what changed, for the audit, or "") and audited in one unit of work. The audit event's reason names the operator (`op_… (name)`), what
    /// changed, and the admin's reason.
    func administerOperator(
        _ name: String,
        reason: String,
        kind: AuditKind,
        optionalReason: Bool = false,
        by admin: Operator,
        _ change: @escaping @Sendable (Operator, any SQLDatabase) async throws -> String
    ) async throws {
        try Self.requireAdmin(admin)
        guard name != admin.name else { throw SupportError.invalid("an admin cannot do this to themself") }
        let trimmed = reason.trimmingCharacters(in: .whitespacesAndNewlines)
        if !(optionalReason && trimmed.isEmpty) { _ = try Self.checkedReason(trimmed) }
        let recorder = self.recorder
        try await database.transaction { db -> Void in
            guard let target = try await db.operators.find(name: name) else { throw SupportError.notFound("there is no operator named \(name)") }
            let what = try await change(target, db)
            let recorded = "\(target.id) (\(target.name))" + (what.isEmpty ? "" : " \(what)") + (trimmed.isEmpty ? "" : ": \(trimmed)")
            try await recorder.audit(kind, succeeded: true, account: nil, operator: SupportAction(operatorID: admin.id, reason: recorded), on: db)
        }
    }

    /// Registers or renames a payee on behalf of `admin`, recorded as registered by the admin's id and audited.
    public func registerPayee(id: String, name: String, verified: Bool, by admin: Operator) async throws {
        try Self.requireAdmin(admin)
        let recorder = self.recorder
        let now = clock.now
        do {
            try await database.transaction { db -> Void in
                _ = try await PayeeRegistry.register(
                    id: id,
                    name: name,
                    verification: verified ? "verified" : "unverified",
                    by: admin.id,
                    at: now,
                    on: db
                )
                try await recorder.audit(
                    .payeeRegistered,
                    succeeded: true,
                    account: nil,
                    operator: SupportAction(operatorID: admin.id, reason: id),
                    on: db
                )
            }
        } catch let error as APIError {
            throw SupportError.invalid(error.detail)
        }
    }

    /// Disables a service client on behalf of `admin`: its secrets and tokens stop working at once. Audited.
    public func disableServiceClient(_ clientID: String, by admin: Operator) async throws {
        try Self.requireAdmin(admin)
        let clients = ServiceClients(database: database, clock: clock, random: random)
        let recorder = self.recorder
        do {
            try await database.transaction { db -> Void in
                try await clients.disable(clientID: clientID, on: db)
                try await recorder.audit(
                    .serviceClientDisabled,
                    succeeded: true,
                    account: nil,
                    client: clientID,
                    operator: SupportAction(operatorID: admin.id, reason: clientID),
                    on: db
                )
            }
        } catch let error as ConfigurationError {
            throw SupportError.notFound(error.message)
        }
    }

    /// A live webhook endpoint, as an admin lists them (never its secret).
    public struct WebhookEndpointSummary: Sendable {
        /// The endpoint id.
        public let id: String
        /// The service client that registered it.
        public let clientID: String
        /// Where events go.
        public let url: String
        /// The events it asked for.
        public let events: [String]
        /// How its deliveries of the last `hours` stand.
        public var health = WebhookHealth()
    }

    /// Every live webhook endpoint, of every service client, oldest first, with how its deliveries made in the last
    /// `hours` (1-168) stand.
    public func webhookEndpoints(hours: Int = 24) async throws -> [WebhookEndpointSummary] {
        guard (1...168).contains(hours) else { throw SupportError.invalid("hours is 1-168") }
        let since = clock.now.addingTimeInterval(-Double(hours) * 3600).millisecondsSince1970
        return try await database.transaction { db in
            var summaries: [WebhookEndpointSummary] = []
            for endpoint in try await db.webhooks.allLiveEndpoints() {
                var summary = WebhookEndpointSummary(id: endpoint.id, clientID: endpoint.clientID, url: endpoint.url, events: endpoint.events)
                summary.health = try await db.webhooks.health(endpoint: endpoint.id, since: since)
                summaries.append(summary)
            }
            return summaries
        }
    }
}
