import BioAuthCore
import Foundation
import SQLKit

extension SQLDatabase {
    /// `approvals`: sign-ins and operations that started on another channel, answered on the customer's phone.
    var approvals: ApprovalsTable { ApprovalsTable(db: self) }
}

/// The statements on `approvals`.
struct ApprovalsTable: Table {
    let db: any SQLDatabase

    static let columns = [
        "id", "account_id", "kind", "client_id", "requester", "binding_message", "channel_browser", "channel_platform", "channel_address",
        "match_number", "number_choices", "challenge", "status", "created_at", "expires_at", "answered_at", "device_id", "deny_reason",
        "signed_approval", "delivery_mode", "poll_interval", "next_poll_at", "redeemed_at", "session_id", "bind_session_id", "bind_key_id",
    ]

    /// Stores a new pending request; `authRequestHash` is the hash of CIBA's `auth_req_id` (nil for a request without one).
    func insert(_ approval: ApprovalInfo, authRequestHash: String?) async throws {
        try await db.insert(into: "approvals").columns(Self.columns + ["auth_req_hash"])
            .values(
                SQLBind(approval.id),
                SQLBind(approval.accountID),
                SQLBind(approval.kind.rawValue),
                SQLBind(approval.clientID),
                SQLBind(approval.requester),
                SQLBind(approval.bindingMessage),
                SQLBind(approval.channel.browser.isEmpty ? nil : approval.channel.browser),
                SQLBind(approval.channel.platform.isEmpty ? nil : approval.channel.platform),
                SQLBind(approval.channel.address.isEmpty ? nil : approval.channel.address),
                SQLBind(approval.matchNumber),
                SQLBind(approval.numberChoices.isEmpty ? nil : approval.numberChoices.map(String.init).joined(separator: ",")),
                SQLBind(Base64URL.encode(approval.challenge)),
                SQLBind(approval.status.rawValue),
                SQLBind(approval.createdAt.millisecondsSince1970),
                SQLBind(approval.expiresAt.millisecondsSince1970),
                SQLBind(Int64?.none),
                SQLBind(String?.none),
                SQLBind(String?.none),
                SQLBind(String?.none),
                SQLBind(approval.deliveryMode.rawValue),
                SQLBind(approval.pollInterval),
                SQLBind(Int64?.none),
                SQLBind(Int64?.none),
                SQLBind(String?.none),
                SQLBind(approval.binding?.sessionID),
                SQLBind(approval.binding.map { Base64URL.encode($0.keyID) }),
                SQLBind(authRequestHash)
            )
            .run()
    }

    /// The account's request `id`, as stored (a pending one past its expiry is still `pending` here).
    func find(_ id: String, account: String) async throws -> ApprovalInfo? {
        try await select().where("id", .equal, id).where("account_id", .equal, account).first().map(ApprovalInfo.init(row:))
    }

    /// The request `id`, whoever's it is: for the QR code that made it, which the rules hold to its browser.
    func find(_ id: String) async throws -> ApprovalInfo? {
        try await select().where("id", .equal, id).first().map(ApprovalInfo.init(row:))
    }

    /// The request whose CIBA `auth_req_id` hashes to `hash`, whichever client's: the rules check that it is the caller's.
    func find(authRequestHash hash: String) async throws -> ApprovalInfo? {
        try await select().where("auth_req_hash", .equal, hash).first().map(ApprovalInfo.init(row:))
    }

    /// The account's requests, newest first; only those in `status` as the phone sees it at `now` when given.
    func list(account: String, status: ApprovalInfo.Status?, now: Int64, limit: Int) async throws -> [ApprovalInfo] {
        var query = select().where("account_id", .equal, account)
        if let status { query = query.where(Self.statusCondition(status, now: now)) }
        return try await query.orderBy("created_at", .descending).orderBy("id", .descending).limit(limit).all().map(ApprovalInfo.init(row:))
    }

    /// How many of the account's requests are pending and not past their expiry at `now`.
    func pendingCount(account: String, now: Int64) async throws -> Int {
        try await db.select().column(SQLFunction("COUNT", args: SQLLiteral.all), as: "n").from("approvals")
            .where("account_id", .equal, account).where(Self.statusCondition(.pending, now: now))
            .first()?.decode(column: "n", as: Int.self) ?? 0
    }

    /// Moves the request from pending (and not past its expiry at `at`) to approved by `device`; false when it was not
    /// pending any more. The status condition makes the answer happen once.
    func markApproved(_ id: String, at: Int64, device: String, signed: SignedApproval) async throws -> Bool {
        !(try await db.update("approvals").set("status", to: ApprovalInfo.Status.approved.rawValue).set("answered_at", to: at)
            .set("device_id", to: device).set("signed_approval", to: try StoredJSON.encode(signed))
            .where("id", .equal, id).where("status", .equal, ApprovalInfo.Status.pending.rawValue).where("expires_at", .greaterThan, at)
            .returning("id").all()).isEmpty
    }

    /// Moves the request from pending to denied for `reason` (by `device` when a phone denied it); false when it was not
    /// pending any more.
    func markDenied(_ id: String, at: Int64, device: String?, reason: String) async throws -> Bool {
        !(try await db.update("approvals").set("status", to: ApprovalInfo.Status.denied.rawValue).set("answered_at", to: at)
            .set("device_id", to: device).set("deny_reason", to: reason)
            .where("id", .equal, id).where("status", .equal, ApprovalInfo.Status.pending.rawValue)
            .returning("id").all()).isEmpty
    }

    /// Moves a pending request whose expiry is at or before `now` to expired; false when it was not (already moved).
    func markExpired(_ id: String, now: Int64) async throws -> Bool {
        !(try await db.update("approvals").set("status", to: ApprovalInfo.Status.expired.rawValue)
            .where("id", .equal, id).where("status", .equal, ApprovalInfo.Status.pending.rawValue).where("expires_at", .lessThanOrEqual, now)
            .returning("id").all()).isEmpty
    }

    /// Counts a poll of the token endpoint at `now`: true when it came no sooner than the interval allows (and the next is
    /// then due `interval` seconds later); false when it came too soon, in which case the interval grows by 5 seconds
    /// (CIBA §11, `slow_down`).
    func recordPoll(_ id: String, now: Int64) async throws -> Bool {
        let onTime = try await db.raw(
            """
            UPDATE approvals SET next_poll_at = \(bind: now) + poll_interval * 1000
            WHERE id = \(bind: id) AND (next_poll_at IS NULL OR next_poll_at <= \(bind: now)) RETURNING id
            """
        ).all()
        if !onTime.isEmpty { return true }
        try await db.raw(
            """
            UPDATE approvals SET poll_interval = poll_interval + 5, next_poll_at = \(bind: now) + (poll_interval + 5) * 1000
            WHERE id = \(bind: id)
            """
        ).run()
        return false
    }

    /// Records that the outcome was collected; false when it had been collected already. The condition makes the
    /// hand-over happen once, so it comes before anything the hand-over starts.
    func markRedeemed(_ id: String, at: Int64) async throws -> Bool {
        !(try await db.update("approvals").set("redeemed_at", to: at)
            .where("id", .equal, id).where("redeemed_at", .is, SQLLiteral.null)
            .returning("id").all()).isEmpty
    }

    /// Records the session a collected sign-in started.
    func recordSession(_ id: String, session: String) async throws {
        try await db.update("approvals").set("session_id", to: session).where("id", .equal, id).run()
    }

    /// Pending requests whose expiry is at or before `now`, soonest first (the expiry sweep).
    func overdue(now: Int64, limit: Int) async throws -> [ApprovalInfo] {
        try await select().where("status", .equal, ApprovalInfo.Status.pending.rawValue).where("expires_at", .lessThanOrEqual, now)
            .orderBy("expires_at").limit(limit).all().map(ApprovalInfo.init(row:))
    }

    private func select() -> SQLSelectBuilder { db.select().columns(Self.columns.map { SQLColumn($0) }).from("approvals") }

    /// The rows of requests in `status` as the phone sees it at `now` (milliseconds): a pending one past its expiry is
    /// expired.
    private static func statusCondition(_ status: ApprovalInfo.Status, now: Int64) -> SQLQueryString {
        switch status {
        case .pending: "(status = 'pending' AND expires_at > \(bind: now))"
        case .expired: "(status = 'expired' OR (status = 'pending' AND expires_at <= \(bind: now)))"
        default: "status = \(bind: status.rawValue)"
        }
    }
}

extension ApprovalInfo {
    /// An `approvals` row.
    init(row: any SQLRow) throws {
        guard let status = Status(rawValue: try row.decode(column: "status", as: String.self)) else {
            throw UnreadableRow(table: "approvals", column: "status")
        }
        guard let kind = CanonicalApproval.Kind(rawValue: try row.decode(column: "kind", as: String.self)) else {
            throw UnreadableRow(table: "approvals", column: "kind")
        }
        guard let mode = DeliveryMode(rawValue: try row.decode(column: "delivery_mode", as: String.self)) else {
            throw UnreadableRow(table: "approvals", column: "delivery_mode")
        }
        guard let challenge = Base64URL.decode(try row.decode(column: "challenge", as: String.self)) else {
            throw UnreadableRow(table: "approvals", column: "challenge")
        }
        var binding: Binding?
        if let session = try row.decode(column: "bind_session_id", as: String?.self) {
            guard let key = try row.decode(column: "bind_key_id", as: String?.self).flatMap(Base64URL.decode) else {
                throw UnreadableRow(table: "approvals", column: "bind_key_id")
            }
            binding = Binding(sessionID: session, keyID: key)
        }
        self.init(
            id: try row.decode(column: "id", as: String.self),
            accountID: try row.decode(column: "account_id", as: String.self),
            kind: kind,
            clientID: try row.decode(column: "client_id", as: String?.self),
            requester: try row.decode(column: "requester", as: String.self),
            bindingMessage: try row.decode(column: "binding_message", as: String?.self),
            channel: .init(
                browser: try row.decode(column: "channel_browser", as: String?.self) ?? "",
                platform: try row.decode(column: "channel_platform", as: String?.self) ?? "",
                address: try row.decode(column: "channel_address", as: String?.self) ?? ""
            ),
            matchNumber: try row.decode(column: "match_number", as: Int?.self),
            numberChoices: (try row.decode(column: "number_choices", as: String?.self) ?? "").split(separator: ",").compactMap { Int($0) },
            challenge: challenge,
            status: status,
            createdAt: Date(millisecondsSince1970: try row.decode(column: "created_at", as: Int64.self)),
            expiresAt: Date(millisecondsSince1970: try row.decode(column: "expires_at", as: Int64.self)),
            answeredAt: Date(storedMilliseconds: try row.decode(column: "answered_at", as: Int64?.self)),
            deviceID: try row.decode(column: "device_id", as: String?.self),
            denyReason: try row.decode(column: "deny_reason", as: String?.self),
            signedApproval: try row.decode(column: "signed_approval", as: String?.self).map { try StoredJSON.decode(SignedApproval.self, $0) },
            deliveryMode: mode,
            pollInterval: try row.decode(column: "poll_interval", as: Int.self),
            redeemed: try row.decode(column: "redeemed_at", as: Int64?.self) != nil,
            binding: binding
        )
    }
}

// MARK: Retention

extension ApprovalsTable {
    /// Approval requests whose time to be answered ended before `cutoff`, whatever their outcome.
    static func purge(expiredBefore cutoff: Int64) -> PurgeRule {
        PurgeRule(table: "approvals", key: "id", condition: "expires_at < \(bind: cutoff)")
    }
}
