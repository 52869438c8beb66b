import Foundation
import NIOHTTP1
import SQLKit

/// OpenID CIBA's ping mode, sent by the webhook dispatcher: when a ping-mode request is answered or expires, its client's
/// registered notification endpoint gets `POST {"auth_req_id": …}` with `Authorization: Bearer <client_notification_token>`
/// (CIBA §10.2), through the same outbound rules as webhooks (``OutboundHTTP``). The client then collects the outcome at
/// the token endpoint. A failed ping is tried again after the webhook backoff, until 10 minutes after the request's end;
/// the client may poll meanwhile.
extension WebhookDispatcher {
    /// Claims up to `limit` due pings, each with a lease as a webhook delivery has.
    func claimDuePings(limit: Int) async throws -> [CIBAPing] {
        let at = clock.now.millisecondsSince1970
        let leaseEnd = at + Int64(policy.leaseDuration * 1000)
        return try await database.transaction { db in try await db.cibaPings.claimDue(now: at, leaseUntil: leaseEnd, limit: limit) }
    }

    /// Sends one claimed ping and records the outcome; never throws (a failure to record leaves the lease to make it due
    /// again).
    func ping(_ ping: CIBAPing) async {
        let started = now
        var failure: AttemptFailure?
        do {
            let endpoint = try await database.transaction { db in try await db.serviceClients.notificationEndpoint(of: ping.clientID) }
            guard let endpoint else { throw NoNotificationEndpoint() }
            guard let opened = secrets.open(ping.sealed, for: ping.approvalID), let carried = CIBAPingSecrets.decoded(opened) else {
                throw UnsignableDelivery()
            }
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: "application/json")
            headers.add(name: "User-Agent", value: "BioAuth-CIBA/1")
            headers.add(name: "Authorization", value: "Bearer " + carried.token)
            let body = try JSONSerialization.data(withJSONObject: ["auth_req_id": carried.authRequestID])
            let status = try await outbound.post(to: endpoint, headers: headers, body: body, timeout: policy.timeout)
            if !(200..<300).contains(status) { failure = AttemptFailure(status: status) }
        } catch {
            failure = AttemptFailure(error)
        }
        do {
            let now = clock.now.millisecondsSince1970
            if let failure {
                let next = now + Int64(policy.delay(afterFailures: ping.attempts, jitter: Double.random(in: 0.8...1.2)) * 1000)
                try await database.transaction { db in try await db.cibaPings.recordFailure(ping.approvalID, error: failure.detail, next: next) }
                logger.warning(
                    "ciba ping failed",
                    metadata: [
                        "approval": "\(ping.approvalID)", "client": "\(ping.clientID)", "attempt": "\(ping.attempts)", "error": "\(failure.detail)",
                    ]
                )
            } else {
                try await database.transaction { db in try await db.cibaPings.markDelivered(ping.approvalID, at: now) }
                logger.info(
                    "ciba ping delivered",
                    metadata: [
                        "approval": "\(ping.approvalID)", "client": "\(ping.clientID)", "latency_ms": "\(now - started.millisecondsSince1970)",
                    ]
                )
            }
        } catch {
            logger.error("recording a ciba ping failed", metadata: ["approval": "\(ping.approvalID)", "error": "\(String(reflecting: error))"])
        }
    }

    /// Every due ping, in batches (what ``runOnce()`` does after the webhook deliveries). Returns how many were attempted.
    func pingDue() async throws -> Int {
        var attempted = 0
        while !Task.isShuttingDownGracefully {
            let pings = try await claimDuePings(limit: Self.poolSize)
            guard !pings.isEmpty else { break }
            await withTaskGroup(of: Void.self) { group in
                for ping in pings { group.addTask { await self.ping(ping) } }
            }
            attempted += pings.count
        }
        return attempted
    }
}

/// The client no longer has a notification endpoint (an operator removed it): the ping is not sent.
struct NoNotificationEndpoint: Error, CustomStringConvertible {
    var description: String { "the client has no notification endpoint any more" }
}
