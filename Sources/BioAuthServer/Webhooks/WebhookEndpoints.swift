import BioAuthCore
import Foundation
import SQLKit

/// A service client's webhook endpoint, as listed (never its secrets).
struct WebhookEndpoint: Sendable, Equatable {
    var id: String
    var url: String
    var events: [String]
    var createdAt: Date
    /// When the previous secret stops signing, while a rotation is under way.
    var previousSecretExpiresAt: Date?
}

/// One event's delivery to one endpoint, as the endpoint's owner sees it.
struct WebhookDelivery: Sendable, Equatable {
    var eventID: String
    var eventType: String
    /// `pending` (not yet delivered; tried again at ``nextAttemptAt``), `delivered`, or `failed` (given up).
    var status: String
    var attempts: Int
    var lastStatusCode: Int?
    var lastError: String?
    var createdAt: Date
    var nextAttemptAt: Date?
    var deliveredAt: Date?
}

extension BioAuthService {
    /// The most endpoints one service client may have.
    static let maxWebhookEndpoints = 20

    /// Registers an endpoint of `client` for `events`; returns it and its first secret (shown once).
    func createWebhookEndpoint(url rawURL: String, events rawEvents: [String], client: AuthenticatedService) async throws
        -> (endpoint: WebhookEndpoint, secret: String)
    {
        let url = try Self.webhookURL(rawURL)
        let events = try Self.webhookEvents(rawEvents)
        let endpoint = WebhookEndpoint(id: "we_" + newID(), url: url, events: events, createdAt: now)
        let secret = "whsec_" + newSecret()
        let sealed = try webhookSecrets.seal(secret, for: endpoint.id)
        let created = now.millisecondsSince1970
        return try await commit { db in
            let count = try await db.raw(
                "SELECT COUNT(*) AS n FROM webhook_endpoints WHERE client_id = \(bind: client.clientID) AND deleted_at IS NULL"
            ).first()?.decode(column: "n", as: Int.self) ?? 0
            guard count < Self.maxWebhookEndpoints else {
                throw APIError(.webhookEndpointLimit, "A service client has at most \(Self.maxWebhookEndpoints) webhook endpoints; delete one first.")
            }
            try await db.raw(
                """
                INSERT INTO webhook_endpoints (id, client_id, url, events, created_at, deleted_at)
                VALUES (\(bind: endpoint.id), \(bind: client.clientID), \(bind: url), \(bind: events.joined(separator: " ")), \(bind: created), NULL)
                """
            ).run()
            try await db.raw(
                """
                INSERT INTO webhook_secrets (id, endpoint_id, secret, created_at, expires_at)
                VALUES (\(bind: newID()), \(bind: endpoint.id), \(bind: sealed), \(bind: created), NULL)
                """
            ).run()
            try await audit(.webhookEndpointCreated, succeeded: true, account: nil, client: client.clientID, on: db)
            return (endpoint, secret)
        }
    }

    /// The client's live endpoints, oldest first.
    func webhookEndpoints(client: AuthenticatedService) async throws -> [WebhookEndpoint] {
        let at = now.millisecondsSince1970
        return try await database.transaction { db in
            try await db.raw(
                """
                SELECT e.id, e.url, e.events, e.created_at,
                    (SELECT MAX(s.expires_at) FROM webhook_secrets s WHERE s.endpoint_id = e.id AND s.expires_at > \(bind: at)) AS rotating_until
                FROM webhook_endpoints e WHERE e.client_id = \(bind: client.clientID) AND e.deleted_at IS NULL ORDER BY e.created_at, e.id
                """
            ).all().map { row in
                WebhookEndpoint(
                    id: try row.decode(column: "id", as: String.self), url: try row.decode(column: "url", as: String.self),
                    events: try row.decode(column: "events", as: String.self).split(separator: " ").map(String.init),
                    createdAt: Date(millisecondsSince1970: try row.decode(column: "created_at", as: Int64.self)),
                    previousSecretExpiresAt: try row.decode(column: "rotating_until", as: Int64?.self).map(Date.init(millisecondsSince1970:)))
            }
        }
    }

    /// Gives the endpoint a new secret, shown once. Deliveries carry a signature with each live secret, so the previous
    /// one keeps verifying for ``WebhookPolicy/rotationOverlap``; a secret older than that stops now.
    func rotateWebhookSecret(_ endpointID: String, client: AuthenticatedService) async throws -> (secret: String, previousExpiresAt: Date) {
        let secret = "whsec_" + newSecret()
        let sealed = try webhookSecrets.seal(secret, for: endpointID)
        let at = now, overlapEnds = at.addingTimeInterval(configuration.webhooks.rotationOverlap)
        return try await commit { db in
            try await ownedEndpoint(endpointID, client: client, on: db)
            // Secrets whose overlap has ended sign nothing more: they go.
            try await db.raw(
                "DELETE FROM webhook_secrets WHERE endpoint_id = \(bind: endpointID) AND expires_at IS NOT NULL AND expires_at <= \(bind: at.millisecondsSince1970)"
            ).run()
            // Secrets still live (the current one, and any earlier one whose overlap has not ended) end with this overlap at
            // the latest; the new one has no end.
            try await db.raw(
                """
                UPDATE webhook_secrets SET expires_at = \(bind: overlapEnds.millisecondsSince1970)
                WHERE endpoint_id = \(bind: endpointID) AND (expires_at IS NULL OR expires_at > \(bind: overlapEnds.millisecondsSince1970))
                """
            ).run()
            try await db.raw(
                """
                INSERT INTO webhook_secrets (id, endpoint_id, secret, created_at, expires_at)
                VALUES (\(bind: newID()), \(bind: endpointID), \(bind: sealed), \(bind: at.millisecondsSince1970), NULL)
                """
            ).run()
            try await audit(.webhookSecretRotated, succeeded: true, account: nil, client: client.clientID, on: db)
            return (secret, overlapEnds)
        }
    }

    /// Deletes the endpoint and its secrets: nothing more is delivered to it, and its undelivered events are dropped.
    func deleteWebhookEndpoint(_ endpointID: String, client: AuthenticatedService) async throws {
        let at = now.millisecondsSince1970
        try await commit { db -> Void in
            try await ownedEndpoint(endpointID, client: client, on: db)
            try await db.raw("UPDATE webhook_endpoints SET deleted_at = \(bind: at) WHERE id = \(bind: endpointID)").run()
            try await db.raw("DELETE FROM webhook_secrets WHERE endpoint_id = \(bind: endpointID)").run()
            try await db.raw(
                "UPDATE webhook_deliveries SET status = 'dropped', lease_owner = NULL, lease_until = NULL WHERE endpoint_id = \(bind: endpointID) AND status = 'pending'"
            ).run()
            try await audit(.webhookEndpointDeleted, succeeded: true, account: nil, client: client.clientID, on: db)
        }
    }

    /// The endpoint's most recent deliveries, newest first.
    func webhookDeliveries(_ endpointID: String, limit: Int, client: AuthenticatedService) async throws -> [WebhookDelivery] {
        try await database.transaction { db in
            try await ownedEndpoint(endpointID, client: client, on: db)
            return try await db.raw(
                """
                SELECT d.event_id, e.type, d.status, d.attempts, d.last_status, d.last_error, d.created_at, d.next_attempt_at, d.delivered_at
                FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
                WHERE d.endpoint_id = \(bind: endpointID) ORDER BY d.created_at DESC, d.event_id DESC LIMIT \(literal: limit)
                """
            ).all().map { row in
                let status = try row.decode(column: "status", as: String.self)
                return WebhookDelivery(
                    eventID: try row.decode(column: "event_id", as: String.self), eventType: try row.decode(column: "type", as: String.self),
                    status: status, attempts: try row.decode(column: "attempts", as: Int.self),
                    lastStatusCode: try row.decode(column: "last_status", as: Int?.self), lastError: try row.decode(column: "last_error", as: String?.self),
                    createdAt: Date(millisecondsSince1970: try row.decode(column: "created_at", as: Int64.self)),
                    nextAttemptAt: status == "pending" ? Date(millisecondsSince1970: try row.decode(column: "next_attempt_at", as: Int64.self)) : nil,
                    deliveredAt: try row.decode(column: "delivered_at", as: Int64?.self).map(Date.init(millisecondsSince1970:)))
            }
        }
    }

    /// Throws `webhook_endpoint_not_found` unless `endpointID` is a live endpoint of `client`.
    private func ownedEndpoint(_ endpointID: String, client: AuthenticatedService, on db: any SQLDatabase) async throws {
        guard endpointID.utf8.count <= 64,
            try await db.raw(
                "SELECT id FROM webhook_endpoints WHERE id = \(bind: endpointID) AND client_id = \(bind: client.clientID) AND deleted_at IS NULL"
            ).first() != nil
        else { throw APIError(.webhookEndpointNotFound, "This service client has no such webhook endpoint.") }
    }

    /// An endpoint URL: `https://`, or `http://` to a loopback address (for testing on one machine); a host; no user
    /// name, password or fragment; at most 2048 bytes of visible ASCII.
    static func webhookURL(_ text: String) throws -> String {
        let invalid = APIError(
            .invalidWebhookURL, "url must be https:// (http:// only to 127.0.0.1, ::1 or localhost), without credentials or fragment, at most 2048 bytes.")
        guard (1...2048).contains(text.utf8.count), text.utf8.allSatisfy({ (0x21...0x7E).contains($0) }),
            let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            let host = components.host?.lowercased(), !host.isEmpty,
            components.user == nil, components.password == nil, components.fragment == nil
        else { throw invalid }
        switch scheme {
        case "https": return text
        case "http" where ["127.0.0.1", "localhost", "::1", "[::1]"].contains(host): return text
        default: throw invalid
        }
    }

    /// The events asked for: at least one, each known, each once (in the order given).
    static func webhookEvents(_ events: [String]) throws -> [String] {
        guard !events.isEmpty, events.count <= WebhookEventType.allCases.count else {
            throw APIError(.invalidEventType, "events lists 1-\(WebhookEventType.allCases.count) of: \(WebhookEventType.allCases.map(\.rawValue).joined(separator: ", ")).")
        }
        var seen: [String] = []
        for event in events {
            guard WebhookEventType(rawValue: event) != nil else {
                throw APIError(.invalidEventType, "Unknown event type; events are: \(WebhookEventType.allCases.map(\.rawValue).joined(separator: ", ")).")
            }
            if !seen.contains(event) { seen.append(event) }
        }
        return seen
    }
}

extension BioAuthService {
    /// Whether `stored` is a webhook secret written before secrets were sealed (in clear).
    static func isLegacyWebhookSecret(_ stored: String) -> Bool { stored.hasPrefix("whsec_") }

    /// The signing secret `stored` holds for `endpointID`: opened, or as it is when it was stored in clear before
    /// sealing; nil when it does not open (sealed for another endpoint, under another key, or damaged).
    func openWebhookSecret(_ stored: String, endpointID: String) -> String? {
        Self.isLegacyWebhookSecret(stored) ? stored : webhookSecrets.open(stored, for: endpointID)
    }

    /// Seals every webhook secret stored in clear by an earlier version (run at start-up; harmless when several
    /// instances run it at once), and refuses a PIN key that did not seal the secrets already sealed.
    ///
    /// - Returns: how many secrets were sealed.
    @discardableResult
    func sealLegacyWebhookSecrets() async throws -> Int {
        let sealer = webhookSecrets
        let sealed = try await commit { db -> Int in
            if let stored = try await db.raw("SELECT secret FROM webhook_secrets WHERE secret LIKE 'v1.%' LIMIT 1")
                .first()?.decode(column: "secret", as: String.self), !sealer.sealedWithThisKey(stored)
            {
                throw ConfigurationError(
                    message: "the PIN key file does not match this database: its webhook secrets were sealed under another key (use that file)")
            }
            let legacy = try await db.raw("SELECT id, endpoint_id, secret FROM webhook_secrets WHERE secret NOT LIKE 'v1.%'").all()
                .filter { Self.isLegacyWebhookSecret(try $0.decode(column: "secret", as: String.self)) }
            for row in legacy {
                let id = try row.decode(column: "id", as: String.self)
                let stored = try row.decode(column: "secret", as: String.self)
                let value = try sealer.seal(stored, for: try row.decode(column: "endpoint_id", as: String.self))
                try await db.raw("UPDATE webhook_secrets SET secret = \(bind: value) WHERE id = \(bind: id) AND secret = \(bind: stored)").run()
            }
            return legacy.count
        }
        if sealed > 0 { logger.notice("sealed \(sealed) webhook secrets stored in clear by an earlier version") }
        return sealed
    }
}
