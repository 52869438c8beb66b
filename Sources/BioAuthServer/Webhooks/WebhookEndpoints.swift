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

/// How one endpoint's recent deliveries stand, as an admin reads it on the console.
public struct WebhookHealth: Sendable, Equatable {
    /// A failed attempt's answer.
    public struct Failure: Sendable, Equatable {
        /// The endpoint's HTTP status, when it answered.
        public var statusCode: Int?
        /// What the endpoint's owner is told of it (`not delivered`; the cause is in the server's log and in
        /// `bioauth_webhook_attempts_total`'s `error` label).
        public var error: String?
        /// When the event it was delivering was made.
        public var deliveryCreatedAt: Date
    }
    /// Delivered.
    public var delivered = 0
    /// Given up: every attempt failed until the delivery's time ran out.
    public var givenUp = 0
    /// Pending after at least one failed attempt: tried again later.
    public var retrying = 0
    /// Pending, not tried yet.
    public var waiting = 0
    /// When the last delivery was delivered.
    public var lastDeliveredAt: Date?
    /// The answer of the newest counted delivery whose latest attempt failed (a delivery that later succeeded shows
    /// none: its record keeps only its latest attempt).
    public var lastFailure: Failure?

    /// Whether anything it was sent went wrong: a delivery given up or being retried.
    public var isFailing: Bool { givenUp > 0 || retrying > 0 }
}

extension BioAuthService {
    /// The most endpoints one service client may have.
    static let maxWebhookEndpoints = 20

    /// Registers an endpoint of `client` for `events`; returns it and its first secret (shown once).
    func createWebhookEndpoint(
        url rawURL: String,
        events rawEvents: [String],
        client: AuthenticatedService
    ) async throws
        -> (endpoint: WebhookEndpoint, secret: String)
    {
        let url = try Self.webhookURL(rawURL)
        do { try await OutboundHTTP(policy: configuration.outbound).check(url) } catch let refusal as OutboundRefusal {
            throw APIError(
                .webhookDestinationNotAllowed,
                "The server does not deliver to this destination: \(refusal.reason). Webhooks go to public addresses only, unless the operator allows the destination (--outbound-allow)."
            )
        }
        let events = try Self.webhookEvents(rawEvents)
        let endpoint = WebhookEndpoint(id: "we_" + newID(), url: url, events: events, createdAt: now)
        let secret = "whsec_" + newSecret()
        let sealed = try webhookSecrets.seal(secret, for: endpoint.id)
        let created = now.millisecondsSince1970
        return try await commit { db in
            let count = try await db.webhooks.liveEndpointCount(client: client.clientID)
            guard count < Self.maxWebhookEndpoints else {
                throw APIError(.webhookEndpointLimit, "A service client has at most \(Self.maxWebhookEndpoints) webhook endpoints; delete one first.")
            }
            try await db.webhooks.insertEndpoint(endpoint, client: client.clientID)
            try await db.webhooks.insertSecret(id: newID(), endpoint: endpoint.id, sealed: sealed, at: created)
            try await recorder.audit(.webhookEndpointCreated, succeeded: true, account: nil, client: client.clientID, on: db)
            return (endpoint, secret)
        }
    }

    /// The client's live endpoints, oldest first.
    func webhookEndpoints(client: AuthenticatedService) async throws -> [WebhookEndpoint] {
        let at = now.millisecondsSince1970
        return try await database.transaction { db in try await db.webhooks.liveEndpoints(client: client.clientID, now: at) }
    }

    /// Gives the endpoint a new secret, shown once. Deliveries carry a signature with each live secret, so the previous
    /// one keeps verifying for ``WebhookPolicy/rotationOverlap``; a secret older than that stops now.
    func rotateWebhookSecret(_ endpointID: String, client: AuthenticatedService) async throws -> (secret: String, previousExpiresAt: Date) {
        let secret = "whsec_" + newSecret()
        let sealed = try webhookSecrets.seal(secret, for: endpointID)
        let at = now
        let overlapEnds = at.addingTimeInterval(configuration.webhooks.rotationOverlap)
        return try await commit { db in
            try await ownedEndpoint(endpointID, client: client, on: db)
            // Secrets whose overlap has ended sign nothing more: they go.
            try await db.webhooks.deleteEndedSecrets(endpoint: endpointID, now: at.millisecondsSince1970)
            // Secrets still live (the current one, and any earlier one whose overlap has not ended) end with this overlap at
            // the latest; the new one has no end.
            try await db.webhooks.endSecrets(endpoint: endpointID, by: overlapEnds.millisecondsSince1970)
            try await db.webhooks.insertSecret(id: newID(), endpoint: endpointID, sealed: sealed, at: at.millisecondsSince1970)
            try await recorder.audit(.webhookSecretRotated, succeeded: true, account: nil, client: client.clientID, on: db)
            return (secret, overlapEnds)
        }
    }

    /// Deletes the endpoint and its secrets: nothing more is delivered to it, and its undelivered events are dropped.
    func deleteWebhookEndpoint(_ endpointID: String, client: AuthenticatedService) async throws {
        let at = now.millisecondsSince1970
        try await commit { db -> Void in
            try await ownedEndpoint(endpointID, client: client, on: db)
            try await db.webhooks.deleteEndpoint(endpointID, at: at)
            try await recorder.audit(.webhookEndpointDeleted, succeeded: true, account: nil, client: client.clientID, on: db)
        }
    }

    /// The endpoint's most recent deliveries, newest first, with coarse outcomes (``AttemptFailure/shown``): the detail is
    /// in the server's log and metrics, and on the operator console.
    func webhookDeliveries(_ endpointID: String, limit: Int, client: AuthenticatedService) async throws -> [WebhookDelivery] {
        try await database.transaction { db in
            try await ownedEndpoint(endpointID, client: client, on: db)
            return try await db.webhooks.deliveries(endpoint: endpointID, limit: limit).map { delivery in
                var shown = delivery
                shown.lastError = delivery.lastError.map(AttemptFailure.shown(stored:))
                // The receiver's status only once it took the event: a failed attempt's would tell what answers where.
                if let status = delivery.lastStatusCode, !(200..<300).contains(status) { shown.lastStatusCode = nil }
                return shown
            }
        }
    }

    /// Throws `webhook_endpoint_not_found` unless `endpointID` is a live endpoint of `client`.
    private func ownedEndpoint(_ endpointID: String, client: AuthenticatedService, on db: any SQLDatabase) async throws {
        guard endpointID.utf8.count <= 64, try await db.webhooks.isLiveEndpoint(endpointID, client: client.clientID) else {
            throw APIError(.webhookEndpointNotFound, "This service client has no such webhook endpoint.")
        }
    }

    /// An endpoint URL: `https://`, or `http://` to a loopback address (for testing on one machine); a host that is an
    /// address in its standard form or a DNS name; a port, if given, of 1-65535; no user name, password or fragment; at
    /// most 2048 bytes of visible ASCII. Where it leads is checked next (``OutboundHTTP/check(_:)``).
    static func webhookURL(_ text: String) throws -> String {
        let invalid = APIError(
            .invalidWebhookURL,
            "url must be https:// (http:// only to 127.0.0.1, ::1 or localhost) to a DNS name or an address in its standard form, with a port of 1-65535 if any, without credentials or fragment, at most 2048 bytes."
        )
        guard (1...2048).contains(text.utf8.count), text.utf8.allSatisfy({ (0x21...0x7E).contains($0) }),
            let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            let host = components.host?.lowercased(), !host.isEmpty, let target = OutboundHost(host),
            components.port.map({ (1...65_535).contains($0) }) ?? true,
            components.user == nil, components.password == nil, components.fragment == nil
        else { throw invalid }
        switch (scheme, target) {
        case ("https", _): return text
        case ("http", .name("localhost")): return text
        case ("http", .address(let address)) where OutboundAddressRules.refusal(of: address) == "loopback": return text
        default: throw invalid
        }
    }

    /// The events asked for: at least one, each known, each once (in the order given).
    static func webhookEvents(_ events: [String]) throws -> [String] {
        guard !events.isEmpty, events.count <= WebhookEventType.allCases.count else {
            throw APIError(
                .invalidEventType,
                "events lists 1-\(WebhookEventType.allCases.count) of: \(WebhookEventType.allCases.map(\.rawValue).joined(separator: ", "))."
            )
        }
        var seen: [String] = []
        for event in events {
            guard WebhookEventType(rawValue: event) != nil else {
                throw APIError(
                    .invalidEventType,
                    "Unknown event type; events are: \(WebhookEventType.allCases.map(\.rawValue).joined(separator: ", "))."
                )
            }
            guard !seen.contains(event) else { throw APIError(.invalidEventType, "events lists each type once; \(event) is there twice.") }
            seen.append(event)
        }
        return seen
    }
}

extension BioAuthService {
    /// Whether `stored` is a webhook secret written before secrets were sealed (in clear).
    static func isLegacyWebhookSecret(_ stored: String) -> Bool { stored.hasPrefix("whsec_") }

    /// Seals every webhook secret stored in clear by an earlier version (run at start-up; harmless when several
    /// instances run it at once), and refuses a PIN key that did not seal the secrets already sealed.
    ///
    /// - Returns: how many secrets were sealed.
    @discardableResult
    func sealLegacyWebhookSecrets() async throws -> Int {
        let sealer = webhookSecrets
        let sealed = try await commit { db -> Int in
            if let stored = try await db.webhooks.anySealedSecret(), !sealer.sealedWithThisKey(stored) {
                throw ConfigurationError(
                    message: "the PIN key file does not match this database: its webhook secrets were sealed under another key (use that file)"
                )
            }
            let legacy = try await db.webhooks.unsealedSecrets().filter { Self.isLegacyWebhookSecret($0.stored) }
            for secret in legacy {
                try await db.webhooks.replaceSecret(secret.id, old: secret.stored, new: try sealer.seal(secret.stored, for: secret.endpoint))
            }
            return legacy.count
        }
        if sealed > 0 { logger.notice("sealed \(sealed) webhook secrets stored in clear by an earlier version") }
        return sealed
    }
}

/// Webhook signing secrets as stored: sealed under the PIN key file's webhook key, or in clear from before sealing.
enum WebhookSecrets {
    /// The signing secret `stored` holds for `endpointID`: opened with `sealer`, or as it is when it was stored in clear
    /// before sealing; nil when it does not open (sealed for another endpoint, under another key, or damaged).
    static func open(_ stored: String, endpointID: String, with sealer: SecretSealer) -> String? {
        BioAuthService.isLegacyWebhookSecret(stored) ? stored : sealer.open(stored, for: endpointID)
    }
}
