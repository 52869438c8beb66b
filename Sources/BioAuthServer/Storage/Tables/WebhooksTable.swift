import Foundation
import SQLKit

extension SQLDatabase {
    /// `webhook_endpoints`, `webhook_secrets`, `webhook_events`, `webhook_deliveries` and `webhook_attempts`: where service
    /// clients receive events, the sealed secrets that sign them, and the outbox with its delivery log.
    var webhooks: WebhooksTable { WebhooksTable(db: self) }
}

/// The statements on the webhook tables.
struct WebhooksTable: Table {
    let db: any SQLDatabase

    // MARK: Endpoints

    /// How many live endpoints the client has.
    func liveEndpointCount(client: String) async throws -> Int {
        try await db.select().column(SQLFunction("COUNT", args: SQLLiteral.all), as: "n").from("webhook_endpoints")
            .where("client_id", .equal, client).where("deleted_at", .is, SQLLiteral.null).first()?.decode(column: "n", as: Int.self) ?? 0
    }

    /// Stores a new endpoint of `client`.
    func insertEndpoint(_ endpoint: WebhookEndpoint, client: String) async throws {
        try await db.insert(into: "webhook_endpoints").columns("id", "client_id", "url", "events", "created_at", "deleted_at")
            .values(
                SQLBind(endpoint.id),
                SQLBind(client),
                SQLBind(endpoint.url),
                SQLBind(endpoint.events.joined(separator: " ")),
                SQLBind(endpoint.createdAt.millisecondsSince1970),
                SQLBind(Int64?.none)
            )
            .run()
    }

    /// The client's live endpoints, oldest first, each with when its previous secret stops signing after `now`, if one does.
    func liveEndpoints(client: String, now: Int64) async throws -> [WebhookEndpoint] {
        try await db.raw(
            """
            SELECT e.id, e.url, e.events, e.created_at,
                (SELECT MAX(s.expires_at) FROM webhook_secrets s WHERE s.endpoint_id = e.id AND s.expires_at > \(bind: now)) AS rotating_until
            FROM webhook_endpoints e WHERE e.client_id = \(bind: client) AND e.deleted_at IS NULL ORDER BY e.created_at, e.id
            """
        ).all().map { row in
            WebhookEndpoint(
                id: try row.decode(column: "id", as: String.self),
                url: try row.decode(column: "url", as: String.self),
                events: Self.events(try row.decode(column: "events", as: String.self)),
                createdAt: Date(millisecondsSince1970: try row.decode(column: "created_at", as: Int64.self)),
                previousSecretExpiresAt: Date(storedMilliseconds: try row.decode(column: "rotating_until", as: Int64?.self))
            )
        }
    }

    /// A live endpoint of any client, as an admin lists them.
    struct EndpointOwner: Sendable {
        var id: String
        var clientID: String
        var url: String
        var events: [String]
    }

    /// Every live endpoint, of every client, oldest first.
    func allLiveEndpoints() async throws -> [EndpointOwner] {
        try await db.select().columns("id", "client_id", "url", "events").from("webhook_endpoints").where("deleted_at", .is, SQLLiteral.null)
            .orderBy("created_at").orderBy("id").all().map { row in
                EndpointOwner(
                    id: try row.decode(column: "id", as: String.self),
                    clientID: try row.decode(column: "client_id", as: String.self),
                    url: try row.decode(column: "url", as: String.self),
                    events: Self.events(try row.decode(column: "events", as: String.self))
                )
            }
    }

    /// The endpoint's deliveries made since `since`, counted by how they stand: delivered, given up, pending after a
    /// failed attempt (retrying), pending untried; when the last was delivered; and the answer of the newest one whose
    /// latest attempt failed.
    func health(endpoint: String, since: Int64) async throws -> WebhookHealth {
        var health = WebhookHealth()
        let counts = try await db.raw(
            """
            SELECT status, CASE WHEN attempts > 0 THEN 1 ELSE 0 END AS tried, COUNT(*) AS n, MAX(delivered_at) AS last_delivered
            FROM webhook_deliveries WHERE endpoint_id = \(bind: endpoint) AND created_at >= \(bind: since) GROUP BY 1, 2
            """
        ).all()
        for row in counts {
            let count = try row.decode(column: "n", as: Int.self)
            switch (try row.decode(column: "status", as: String.self), try row.decode(column: "tried", as: Int.self) != 0) {
            case ("delivered", _):
                health.delivered += count
                health.lastDeliveredAt = Date(storedMilliseconds: try row.decode(column: "last_delivered", as: Int64?.self))
            case ("failed", _): health.givenUp += count
            case (_, true): health.retrying += count
            default: health.waiting += count
            }
        }
        let failure = try await db.raw(
            """
            SELECT last_status, last_error, created_at FROM webhook_deliveries
            WHERE endpoint_id = \(bind: endpoint) AND created_at >= \(bind: since) AND (last_error IS NOT NULL OR last_status >= 300)
            ORDER BY created_at DESC LIMIT 1
            """
        ).first()
        if let failure {
            health.lastFailure = WebhookHealth.Failure(
                statusCode: try failure.decode(column: "last_status", as: Int?.self),
                error: try failure.decode(column: "last_error", as: String?.self),
                deliveryCreatedAt: Date(millisecondsSince1970: try failure.decode(column: "created_at", as: Int64.self))
            )
        }
        return health
    }

    /// The ids of the live endpoints that asked for `type`.
    private func liveEndpoints(wanting type: String) async throws -> [String] {
        try await db.all(Self.liveEndpointEvents()).compactMap { row in
            Self.events(try row.decode(column: "events", as: String.self)).contains(type) ? try row.decode(column: "id", as: String.self) : nil
        }
    }

    /// Whether `id` is a live endpoint of `client`.
    func isLiveEndpoint(_ id: String, client: String) async throws -> Bool {
        try await db.select().column("id").from("webhook_endpoints").where("id", .equal, id).where("client_id", .equal, client)
            .where("deleted_at", .is, SQLLiteral.null).first() != nil
    }

    /// Marks the endpoint deleted at `at`, deletes its secrets and drops its pending deliveries.
    func deleteEndpoint(_ id: String, at: Int64) async throws {
        try await db.update("webhook_endpoints").set("deleted_at", to: at).where("id", .equal, id).run()
        try await db.delete(from: "webhook_secrets").where("endpoint_id", .equal, id).run()
        try await db.update("webhook_deliveries").set("status", to: "dropped").set("lease_owner", to: SQLLiteral.null)
            .set("lease_until", to: SQLLiteral.null).where("endpoint_id", .equal, id).where("status", .equal, "pending").run()
    }

    // MARK: Secrets

    /// Stores a sealed secret of `endpoint`, with no end.
    func insertSecret(id: String, endpoint: String, sealed: String, at: Int64) async throws {
        try await db.insert(into: "webhook_secrets").columns("id", "endpoint_id", "secret", "created_at", "expires_at")
            .values(SQLBind(id), SQLBind(endpoint), SQLBind(sealed), SQLBind(at), SQLBind(Int64?.none)).run()
    }

    /// Deletes the endpoint's secrets that ended at or before `now`.
    func deleteEndedSecrets(endpoint: String, now: Int64) async throws {
        try await db.delete(from: "webhook_secrets").where("endpoint_id", .equal, endpoint).where("expires_at", .isNot, SQLLiteral.null)
            .where("expires_at", .lessThanOrEqual, now).run()
    }

    /// Makes every secret of the endpoint end at `until` at the latest.
    func endSecrets(endpoint: String, by until: Int64) async throws {
        try await db.update("webhook_secrets").set("expires_at", to: until).where("endpoint_id", .equal, endpoint)
            .where { $0.where("expires_at", .is, SQLLiteral.null).orWhere("expires_at", .greaterThan, until) }.run()
    }

    /// The endpoint's sealed secrets live at `now`, newest first.
    func liveSecrets(endpoint: String, now: Int64) async throws -> [String] {
        try await db.select().column("secret").from("webhook_secrets").where("endpoint_id", .equal, endpoint)
            .where { $0.where("expires_at", .is, SQLLiteral.null).orWhere("expires_at", .greaterThan, now) }
            .orderBy("created_at", .descending).orderBy("id", .descending).all().map { try $0.decode(column: "secret", as: String.self) }
    }

    /// One stored secret sealed in the current format (`v1.`), if any.
    func anySealedSecret() async throws -> String? {
        try await db.select().column("secret").from("webhook_secrets").where("secret", .like, "v1.%").limit(1).first()?
            .decode(column: "secret", as: String.self)
    }

    /// Every secret not sealed in the current format: id, endpoint and stored text.
    func unsealedSecrets() async throws -> [(id: String, endpoint: String, stored: String)] {
        try await db.select().columns("id", "endpoint_id", "secret").from("webhook_secrets").where("secret", .notLike, "v1.%").all().map { row in
            (
                try row.decode(column: "id", as: String.self), try row.decode(column: "endpoint_id", as: String.self),
                try row.decode(column: "secret", as: String.self)
            )
        }
    }

    /// Replaces the secret `id`'s stored text `old` by `new`; nothing changes when it is no longer `old`.
    func replaceSecret(_ id: String, old: String, new: String) async throws {
        try await db.update("webhook_secrets").set("secret", to: new).where("id", .equal, id).where("secret", .equal, old).run()
    }

    // MARK: The outbox

    /// Writes an event of `type` and one pending delivery of it to each live endpoint that asked for that type, due at
    /// once and given up after `giveUpAt`; nothing when no endpoint asked for it. On PostgreSQL one statement (the
    /// endpoints' read and both inserts, a data-modifying `WITH`: a bank with one endpoint saves two round trips on each
    /// event), so `body` is always made; on SQLite, which runs one unit of work at a time, the read, then, only when an
    /// endpoint asked for the event, `body` and the inserts.
    func enqueueForLiveEndpoints(
        eventID: String,
        type: String,
        body: () throws -> String,
        subject: String?,
        at: Int64,
        giveUpAt: Int64,
        engine: DatabaseDialect
    ) async throws {
        guard engine == .postgres else {
            let endpoints = try await liveEndpoints(wanting: type)
            guard !endpoints.isEmpty else { return }
            let body = try body()
            return try await enqueue(eventID: eventID, type: type, body: body, subject: subject, endpoints: endpoints, at: at, giveUpAt: giveUpAt)
        }
        try await db.run(Self.enqueueForWanting(type, eventID, type, at, try body(), subject, at, giveUpAt, at))
    }

    /// Writes an event and one pending delivery of it to each of `endpoints`, due at once and given up after `giveUpAt`.
    private func enqueue(
        eventID: String,
        type: String,
        body: String,
        subject: String?,
        endpoints: [String],
        at: Int64,
        giveUpAt: Int64
    )
        async throws
    {
        try await db.insert(into: "webhook_events").columns("id", "type", "created_at", "body", "subject_id")
            .values(SQLBind(eventID), SQLBind(type), SQLBind(at), SQLBind(body), SQLBind(subject)).run()
        for endpoint in endpoints {
            try await db.insert(into: "webhook_deliveries")
                .columns("event_id", "endpoint_id", "status", "attempts", "next_attempt_at", "give_up_at", "created_at")
                .values(SQLBind(eventID), SQLBind(endpoint), SQLBind("pending"), SQLBind(0), SQLBind(at), SQLBind(giveUpAt), SQLBind(at)).run()
        }
    }

    /// The endpoint's most recent deliveries, newest first.
    func deliveries(endpoint: String, limit: Int) async throws -> [WebhookDelivery] {
        try await db.raw(
            """
            SELECT d.event_id, e.type, d.status, d.attempts, d.last_status, d.last_error, d.created_at, d.next_attempt_at, d.delivered_at
            FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
            WHERE d.endpoint_id = \(bind: endpoint) ORDER BY d.created_at DESC, d.event_id DESC LIMIT \(literal: limit)
            """
        ).all().map(Self.delivery)
    }

    /// A delivery from a row of `webhook_deliveries` joined with its event's type.
    private static func delivery(_ row: any SQLRow) throws -> WebhookDelivery {
        let status = try row.decode(column: "status", as: String.self)
        return WebhookDelivery(
            eventID: try row.decode(column: "event_id", as: String.self),
            eventType: try row.decode(column: "type", as: String.self),
            status: status,
            attempts: try row.decode(column: "attempts", as: Int.self),
            lastStatusCode: try row.decode(column: "last_status", as: Int?.self),
            lastError: try row.decode(column: "last_error", as: String?.self),
            createdAt: Date(millisecondsSince1970: try row.decode(column: "created_at", as: Int64.self)),
            nextAttemptAt: status == "pending" ? Date(millisecondsSince1970: try row.decode(column: "next_attempt_at", as: Int64.self)) : nil,
            deliveredAt: Date(storedMilliseconds: try row.decode(column: "delivered_at", as: Int64?.self))
        )
    }

    /// The deliveries of every event about `subject` (a payment, passkey or device id), oldest first, with the endpoint
    /// each went to.
    func deliveries(subject: String) async throws -> [(endpointID: String, delivery: WebhookDelivery)] {
        try await db.raw(
            """
            SELECT d.event_id, d.endpoint_id, e.type, d.status, d.attempts, d.last_status, d.last_error, d.created_at, d.next_attempt_at,
                d.delivered_at
            FROM webhook_events e JOIN webhook_deliveries d ON d.event_id = e.id
            WHERE e.subject_id = \(bind: subject) ORDER BY d.created_at, d.event_id, d.endpoint_id
            """
        ).all().map { row in
            (try row.decode(column: "endpoint_id", as: String.self), try Self.delivery(row))
        }
    }

    /// Pending deliveries due at `now`, soonest first, of endpoints other than `excluded`: (event, endpoint).
    func dueDeliveries(now: Int64, limit: Int, excludingEndpoints excluded: [String] = []) async throws -> [(eventID: String, endpointID: String)] {
        var query = db.select().columns("event_id", "endpoint_id").from("webhook_deliveries").where("status", .equal, "pending")
            .where("next_attempt_at", .lessThanOrEqual, now)
        if !excluded.isEmpty { query = query.where("endpoint_id", .notIn, excluded) }
        return try await query.orderBy("next_attempt_at").limit(limit).all().map { row in
            (try row.decode(column: "event_id", as: String.self), try row.decode(column: "endpoint_id", as: String.self))
        }
    }

    /// The outbox's backlog at `now`: the pending deliveries due and not claimed (counted up to `cap`, so that a large
    /// backlog costs no more to count than `cap` entries of the due index), and when the oldest of them was due (the
    /// first of those entries, in the index's order). Claimed deliveries, and those waiting for a retry, are not due.
    func backlog(now: Int64, cap: Int) async throws -> (due: Int, oldestDueAt: Int64?) {
        let row = try await db.raw(
            """
            SELECT COUNT(*) AS due, MIN(next_attempt_at) AS oldest FROM (SELECT next_attempt_at FROM webhook_deliveries
            WHERE status = 'pending' AND next_attempt_at <= \(bind: now) ORDER BY next_attempt_at LIMIT \(bind: cap)) AS due
            """
        ).first()
        return (try row?.decode(column: "due", as: Int.self) ?? 0, try row?.decode(column: "oldest", as: Int64?.self) ?? nil)
    }

    /// Claims a delivery for `instance` until `leaseEnd` and counts the attempt, on the condition that it is still pending
    /// and due at `now` (of two instances, one gets it). Returns the attempt's number and when the delivery is given up.
    func claim(eventID: String, endpointID: String, instance: String, now: Int64, leaseEnd: Int64) async throws -> (attempt: Int, giveUpAt: Int64)? {
        guard
            let row = try await db.raw(
                """
                UPDATE webhook_deliveries SET next_attempt_at = \(bind: leaseEnd), lease_owner = \(bind: instance),
                    lease_until = \(bind: leaseEnd), attempts = attempts + 1
                WHERE event_id = \(bind: eventID) AND endpoint_id = \(bind: endpointID) AND status = 'pending'
                    AND next_attempt_at <= \(bind: now)
                RETURNING attempts, give_up_at
                """
            ).first()
        else { return nil }
        return (try row.decode(column: "attempts", as: Int.self), try row.decode(column: "give_up_at", as: Int64.self))
    }

    /// Where a delivery goes and what it carries: the live endpoint's URL and the event's type and body.
    func target(eventID: String, endpointID: String) async throws -> (url: String, type: String, body: String)? {
        guard
            let row = try await db.raw(
                """
                SELECT e.url, v.type, v.body FROM webhook_endpoints e JOIN webhook_events v ON v.id = \(bind: eventID)
                WHERE e.id = \(bind: endpointID) AND e.deleted_at IS NULL
                """
            ).first()
        else { return nil }
        return (
            try row.decode(column: "url", as: String.self), try row.decode(column: "type", as: String.self),
            try row.decode(column: "body", as: String.self)
        )
    }

    /// One attempt's outcome, for the attempt log.
    struct Attempt: Sendable {
        var eventID: String
        var endpointID: String
        var number: Int
        var startedAt: Int64
        var statusCode: Int?
        var latencyMilliseconds: Int64
        var error: String?
        var instance: String
    }

    /// Logs `attempt` and moves its delivery to `status` (`pending` to try again at `nextAttemptAt`, `delivered` or
    /// `failed`), releasing the lease; the move happens only while `attempt.instance` still holds the delivery (past the
    /// lease, another may have taken it over).
    func recordAttempt(_ attempt: Attempt, status: String, nextAttemptAt: Int64, deliveredAt: Int64?) async throws {
        try await db.insert(into: "webhook_attempts")
            .columns("event_id", "endpoint_id", "attempt", "started_at", "status_code", "latency_ms", "error", "instance")
            .values(
                SQLBind(attempt.eventID),
                SQLBind(attempt.endpointID),
                SQLBind(attempt.number),
                SQLBind(attempt.startedAt),
                SQLBind(attempt.statusCode),
                SQLBind(attempt.latencyMilliseconds),
                SQLBind(attempt.error),
                SQLBind(attempt.instance)
            )
            .run()
        try await db.update("webhook_deliveries").set("status", to: status).set("next_attempt_at", to: nextAttemptAt)
            .set("lease_owner", to: SQLLiteral.null).set("lease_until", to: SQLLiteral.null).set("last_status", to: attempt.statusCode)
            .set("last_error", to: attempt.error).set("delivered_at", to: deliveredAt)
            .where("event_id", .equal, attempt.eventID).where("endpoint_id", .equal, attempt.endpointID)
            .where("lease_owner", .equal, attempt.instance).where("status", .equal, "pending").run()
    }

    /// Read by every change that may emit an event (a payment authorized, a device revoked, …). It reads the whole endpoint
    /// table on purpose, so it is not among the plan-checked hot statements: the table holds a few rows per service client
    /// (at most 20 each), not a row per customer.
    static let liveEndpointEvents = FixedSQL("SELECT id, events FROM webhook_endpoints WHERE deleted_at IS NULL")

    /// ``enqueueForLiveEndpoints(eventID:type:body:subject:at:giveUpAt:engine:)`` on PostgreSQL: the live endpoints whose
    /// space-separated `events` hold the type, the event when there is one, and a delivery to each. Binds: the type; the
    /// event's id, type, time, body and subject; the delivery's next attempt, give-up time and creation time.
    static let enqueueForWanting = FixedSQL(
        """
        WITH endpoints AS (
            SELECT id FROM webhook_endpoints
            WHERE deleted_at IS NULL AND strpos(' ' || events || ' ', ' ' || CAST(? AS TEXT) || ' ') > 0
        ),
        event AS (
            INSERT INTO webhook_events (id, type, created_at, body, subject_id)
            SELECT CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS BIGINT), CAST(? AS TEXT), CAST(? AS TEXT) WHERE EXISTS (SELECT 1 FROM endpoints)
            RETURNING id
        )
        INSERT INTO webhook_deliveries (event_id, endpoint_id, status, attempts, next_attempt_at, give_up_at, created_at)
        SELECT event.id, endpoints.id, 'pending', 0, CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS BIGINT) FROM event, endpoints
        """
    )

    private static func events(_ stored: String) -> [String] { stored.split(separator: " ").map(String.init) }
}

// MARK: Retention

extension WebhooksTable {
    /// Deliveries that ended (delivered, given up or dropped) and were made before `cutoff`, with their attempts; a
    /// pending delivery keeps all of them. A batch is a range of the index of ended deliveries by age.
    static func purgeDeliveries(before cutoff: Int64) -> PurgeRule {
        PurgeRule(
            table: "webhook_deliveries",
            key: "event_id, endpoint_id",
            condition: "status <> 'pending' AND created_at < \(bind: cutoff)",
            dependents: [PurgeRule.Dependent(table: "webhook_attempts", columns: "event_id, endpoint_id")]
        )
    }

    /// Events made before `cutoff` that no delivery refers to any more (each looked up by its key in the deliveries').
    /// The deliveries' rule runs first, so an event whose last deliveries it takes goes in the same run; a dry run counts
    /// it by the deliveries that rule keeps (one pending, or made since `cutoff`).
    ///
    /// The purge itself asks for no delivery at all: a delivery that ends between the two rules is still there, and the
    /// event waits for the next run rather than failing the foreign key.
    static func purgeEvents(before cutoff: Int64) -> PurgeRule {
        func noDelivery(_ kept: SQLQueryString) -> SQLQueryString {
            """
            created_at < \(bind: cutoff) \
            AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = webhook_events.id\(kept))
            """
        }
        return PurgeRule(
            table: "webhook_events",
            key: "id",
            condition: noDelivery(""),
            counted: noDelivery(" AND (d.status = 'pending' OR d.created_at >= \(bind: cutoff))")
        )
    }
}
