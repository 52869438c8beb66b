import Foundation
import SQLKit

extension SQLDatabase {
    /// `ciba_pings`: the notifications OpenID CIBA's ping mode owes its clients, one per request.
    var cibaPings: CIBAPingsTable { CIBAPingsTable(db: self) }
}

/// A ping owed to a client: which request, and the sealed `auth_req_id` and `client_notification_token`.
struct CIBAPing: Sendable, Equatable {
    var approvalID: String
    var clientID: String
    /// `{"auth_req_id", "token"}` sealed for the approval id (``SecretSealer``).
    var sealed: String
    var attempts: Int
}

/// The statements on `ciba_pings`.
struct CIBAPingsTable: Table {
    let db: any SQLDatabase

    /// Records the ping a ping-mode request will owe; not due until ``markDue(_:at:)``. It is given up at `giveUpAt`.
    func insert(approval: String, client: String, sealed: String, giveUpAt: Int64) async throws {
        try await db.insert(into: "ciba_pings")
            .columns("approval_id", "client_id", "sealed", "attempts", "next_attempt_at", "give_up_at", "delivered_at", "last_error")
            .values(
                SQLBind(approval),
                SQLBind(client),
                SQLBind(sealed),
                SQLBind(0),
                SQLBind(Int64?.none),
                SQLBind(giveUpAt),
                SQLBind(Int64?.none),
                SQLBind(String?.none)
            )
            .run()
    }

    /// The request was answered or expired: its ping (if it has one) is due at `at`.
    func markDue(_ approval: String, at: Int64) async throws {
        try await db.update("ciba_pings").set("next_attempt_at", to: at).where("approval_id", .equal, approval)
            .where("next_attempt_at", .is, SQLLiteral.null).where("delivered_at", .is, SQLLiteral.null).run()
    }

    /// Claims up to `limit` pings due at `now` and not given up, each with one conditional update that moves its next
    /// attempt to `leaseUntil` (so one instance at a time attempts it; a dead instance's claim is due again then).
    func claimDue(now: Int64, leaseUntil: Int64, limit: Int) async throws -> [CIBAPing] {
        let due = try await db.select().columns("approval_id").from("ciba_pings")
            .where("next_attempt_at", .lessThanOrEqual, now).where("delivered_at", .is, SQLLiteral.null).where("give_up_at", .greaterThan, now)
            .orderBy("next_attempt_at").limit(limit).all().map { try $0.decode(column: "approval_id", as: String.self) }
        var claimed: [CIBAPing] = []
        for id in due {
            let rows = try await db.update("ciba_pings").set("next_attempt_at", to: leaseUntil).set(SQLColumn("attempts"), to: SQLRaw("attempts + 1"))
                .where("approval_id", .equal, id).where("next_attempt_at", .lessThanOrEqual, now).where("delivered_at", .is, SQLLiteral.null)
                .returning("approval_id", "client_id", "sealed", "attempts").all()
            for row in rows {
                claimed.append(
                    CIBAPing(
                        approvalID: try row.decode(column: "approval_id", as: String.self),
                        clientID: try row.decode(column: "client_id", as: String.self),
                        sealed: try row.decode(column: "sealed", as: String.self),
                        attempts: try row.decode(column: "attempts", as: Int.self)
                    )
                )
            }
        }
        return claimed
    }

    /// The client acknowledged the ping.
    func markDelivered(_ approval: String, at: Int64) async throws {
        try await db.update("ciba_pings").set("delivered_at", to: at).set("last_error", to: String?.none).where("approval_id", .equal, approval).run()
    }

    /// The attempt failed (`error`); the next is due at `next`.
    func recordFailure(_ approval: String, error: String, next: Int64) async throws {
        try await db.update("ciba_pings").set("next_attempt_at", to: next).set("last_error", to: error).where("approval_id", .equal, approval).run()
    }
}

// MARK: Retention

extension CIBAPingsTable {
    /// CIBA pings whose time to be tried (delivered or not) ended before `cutoff`.
    static func purge(givenUpBefore cutoff: Int64) -> PurgeRule {
        PurgeRule(table: "ciba_pings", key: "approval_id", condition: "give_up_at < \(bind: cutoff)")
    }
}
