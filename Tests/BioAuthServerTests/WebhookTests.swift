import BioAuthCore
import Foundation
import HTTPTypes
import SQLKit
import TestTools
import Testing

@testable import BioAuthServer

/// Webhooks: events written with the change that caused them, delivered signed to a real receiver on loopback, retried,
/// given up after the window, never lost, never duplicated by a second instance. The dispatcher is driven by hand on the
/// test clock (its background loop is off), so the retry schedule is checked exactly.
@Suite("Webhooks")
struct WebhookTests {
    /// A server with the background dispatcher off, a service client holding every scope, a receiver and an endpoint for
    /// `events` (all by default) whose secret the receiver trusts.
    struct Setup {
        let api: API
        let receiver: LoopbackWebhookReceiver
        let dispatcher: WebhookDispatcher
        let service: String
        let endpoint: String
        let secret: String
        let client: ServiceClients.Credentials

        /// One delivery pass at the current test time, with the receiver checking signatures at that time.
        @discardableResult
        func deliver() async throws -> (expired: Int, attempted: Int) {
            receiver.verifySignatures(at: api.clock.now)
            return try await dispatcher.runOnce()
        }

        /// A service token of the client now (one lives 5 minutes; tests move the clock further).
        func serviceToken() async throws -> String {
            try #require(try await api.serviceToken(client)["access_token"])
        }

        /// The stored attempts of every delivery, oldest first.
        func attempts() async throws -> [(attempt: Int, status: Int?, error: String?)] {
            try await api.database.transaction { db in
                try await db.raw("SELECT attempt, status_code, error FROM webhook_attempts ORDER BY started_at, attempt").all().map {
                    (
                        try $0.decode(column: "attempt", as: Int.self), try $0.decode(column: "status_code", as: Int?.self),
                        try $0.decode(column: "error", as: String?.self)
                    )
                }
            }
        }
    }

    static func withSetup(
        backend: StorageBackend = .sqlite,
        events: [String] = WebhookEventType.allCases.map(\.rawValue),
        configure: @escaping (inout ServerConfiguration) -> Void = { _ in },
        _ body: @escaping @Sendable (Setup) async throws -> Void
    ) async throws {
        let receiver = try await LoopbackWebhookReceiver.start()
        try await TestServer.run(
            .live,
            backend: backend,
            configure: { configuration in
                configuration.webhooks.pollInterval = 0
                // Long enough for a receiver that answers at once to be heard on a loaded machine (CI once timed out a
                // delivery to one after 0.5 s); a test of a receiver that times out holds its answer for a minute.
                configuration.webhooks.timeout = 5
                // The tests make events by binding one device after another, each with a binding code.
                configuration.binding.attemptsPerAccount = 100
                configure(&configuration)
            },
            { api in
                let client = try await ServiceClients(database: api.database, clock: api.clock)
                    .create(name: "core-banking", scopes: ["webhooks:write", "payees:write", "payments:write"])
                let service = try #require(try await api.serviceToken(client)["access_token"])
                let created = try await api.call(
                    .post,
                    "/v1/service/webhook-endpoints",
                    json: ["url": receiver.url.absoluteString, "events": events],
                    token: service
                )
                try #require(created.status == 201, "\(created.raw)")
                let secret = try #require(created["secret"])
                receiver.trust(secret: secret)
                let dispatcher = WebhookDispatcher(service: api.service)
                let setup = Setup(
                    api: api,
                    receiver: receiver,
                    dispatcher: dispatcher,
                    service: service,
                    endpoint: try #require(created["endpointId"]),
                    secret: secret,
                    client: client
                )
                try await body(setup)
            }
        )
        await receiver.stop()
    }

    @Test("a receiver that never answers holds one delivery slot and nothing else: another endpoint's events arrive while it hangs")
    func hangingReceiver() async throws {
        try await Self.withBackgroundDispatcher(
            { setup in
                let api = setup.api
                // The setup's receiver accepts the connection and answers nothing for a minute, every time.
                setup.receiver.script(.delayed(.seconds(60), status: 200), .delayed(.seconds(60), status: 200), .delayed(.seconds(60), status: 200))
                setup.receiver.verifySignatures(at: api.clock.now)
                let healthy = try await LoopbackWebhookReceiver.start()
                healthy.verifySignatures(at: api.clock.now)
                let created = try await api.call(
                    .post,
                    "/v1/service/webhook-endpoints",
                    json: ["url": healthy.url.absoluteString, "events": ["device.registered"]],
                    token: setup.service
                )
                healthy.trust(secret: try #require(created["secret"]))
                try await api.createAccount()
                let tokens = try await api.signIn()

                #expect(try await api.bind(TestKey(), token: tokens.access).status == 201)
                _ = try await healthy.waitForEvents(1)
                // The hanging receiver holds its attempt for up to 30 s. A dispatcher that waited for its slowest receiver
                // would deliver the next event to the healthy one only after that; here it comes at the next poll.
                #expect(try await api.bind(TestKey(), token: tokens.access).status == 201)
                let arrived = try await healthy.waitForEvents(2, timeout: .seconds(15))
                #expect(arrived.count == 2 && arrived.allSatisfy(\.verified))
                #expect(setup.receiver.acceptedEvents.isEmpty)
                #expect(setup.receiver.deliveries.count == 1, "one attempt at a time for the hanging endpoint, however many are due")
                await healthy.stop()
                // Closing the hanging connection ends its attempt, so the server stops without waiting for the timeout.
                await setup.receiver.stop()
            }
        )
    }

    @Test(
        "an endpoint that has taken a delivery gets several at once, so its deliveries keep up with a busy server; after a failure, one at a time again"
    )
    func severalInFlight() async throws {
        try await Self.withBackgroundDispatcher(
            { setup in
                let api = setup.api
                setup.receiver.verifySignatures(at: api.clock.now)
                try await api.createAccount()
                let tokens = try await api.signIn()
                // The first delivery is answered at once: the endpoint has taken one.
                #expect(try await api.bind(TestKey(), token: tokens.access).status == 201)
                _ = try await setup.receiver.waitForEvents(1)
                // The next four are held unanswered for a minute each. They all arrive while none has been answered: four
                // attempts in flight to the one endpoint (before, the second came only once the first was answered).
                setup.receiver.script(
                    .delayed(.seconds(60), status: 200),
                    .delayed(.seconds(60), status: 200),
                    .delayed(.seconds(60), status: 200),
                    .delayed(.seconds(60), status: 200)
                )
                for _ in 0..<4 { #expect(try await api.bind(TestKey(), token: tokens.access).status == 201) }
                try await Self.waitUntil("four deliveries in flight at once") { setup.receiver.deliveries.count == 5 }
                #expect(Set(setup.receiver.deliveries.map(\.eventID)).count == 5 && setup.receiver.deliveries.allSatisfy(\.verified))
                // Closing the connections fails those attempts: the endpoint is back to one at a time. Of the four retries,
                // due after the backoff on the test's clock, one arrives and is held; the others wait for it.
                await setup.receiver.stop()
                try await Self.waitUntil("the four attempts failed") {
                    try await api.database.transaction { db in
                        try await db.raw("SELECT COUNT(*) AS n FROM webhook_attempts WHERE error IS NOT NULL").first()?.decode(
                            column: "n",
                            as: Int.self
                        )
                    } == 4
                }
                try await setup.receiver.restart()
                setup.receiver.script(.delayed(.seconds(60), status: 200), .delayed(.seconds(60), status: 200))
                api.clock.advance(by: 3600)
                try await Self.waitUntil("a retry in flight") { setup.receiver.deliveries.count == 6 }
                try await Task.sleep(for: .seconds(1))
                #expect(setup.receiver.deliveries.count == 6, "one attempt at a time after a failure")
                await setup.receiver.stop()
            }
        )
    }

    @Test(
        "the outbox's backlog is measured for operators: how many deliveries are due and how long the oldest has waited",
        arguments: StorageBackend.available
    )
    func backlogGauges(backend: StorageBackend) async throws {
        try await Self.withSetup(backend: backend, events: ["device.registered"]) { setup in
            let api = setup.api
            func gauges() throws -> [Double?] {
                let text = String(decoding: try #require(api.service.metrics.exposition()), as: UTF8.self)
                let scrape = MetricsTests.Scrape(status: 200, contentType: nil, text: text)
                return [scrape.value("bioauth_webhook_deliveries_due"), scrape.value("bioauth_webhook_oldest_due_seconds")]
            }
            #expect(try gauges() == [0, 0], "exported from the start")
            try await api.createAccount()
            let tokens = try await api.signIn()
            for _ in 0..<3 { #expect(try await api.bind(TestKey(), token: tokens.access).status == 201) }
            // Nobody has sent them for half a minute. A pass measures the backlog before it delivers.
            api.clock.advance(by: 30)
            setup.receiver.verifySignatures(at: api.clock.now)
            #expect(try await setup.dispatcher.runOnce().attempted == 3)
            #expect(try gauges() == [3, 30])
            #expect(try await setup.dispatcher.runOnce().attempted == 0)
            #expect(try gauges() == [0, 0])
        }
    }

    /// ``withSetup(backend:events:configure:_:)`` for device events, delivered by the server's own background dispatcher
    /// (polling every 0.1 s), a receiver having 30 s to answer.
    static func withBackgroundDispatcher(_ body: @escaping @Sendable (Setup) async throws -> Void) async throws {
        try await withSetup(
            events: ["device.registered"],
            configure: { configuration in
                configuration.webhooks.pollInterval = 0.1
                configuration.webhooks.timeout = 30
            },
            body
        )
    }

    /// Waits, polling every 50 ms for up to 20 s, until `condition` holds; fails the test with `what` otherwise.
    static func waitUntil(_ what: String, _ condition: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(20)
        while try await !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("timed out waiting: \(what)")
                return
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    @Test(
        "on PostgreSQL deliveries go out while requests hold every connection of the pool: the dispatcher has connections of its own",
        .enabled(if: TestTool.ready(.postgres), Comment(rawValue: TestTool.missing(.postgres)))
    )
    func deliveriesBesideBusyPool() async throws {
        try await Self.withSetup(backend: .postgres, configure: { $0.databaseConnections = 2 }, Self.deliveriesWhilePoolHeld)
    }

    /// ``deliveriesBesideBusyPool()``'s body.
    static func deliveriesWhilePoolHeld(_ setup: Setup) async throws {
        let api = setup.api
        try await api.createAccount()
        let tokens = try await api.signIn()
        for _ in 0..<3 { #expect(try await api.bind(TestKey(), token: tokens.access).status == 201) }
        // Two units of work take the pool's two connections and keep them until the deliveries are done (or 60 s
        // passed, when they would never be: the dispatcher queued behind them, as it did on the one pool).
        let gate = TestGate()
        let holders = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<2 {
                    group.addTask {
                        try await api.database.transaction { db in
                            try await db.raw("SELECT 1 AS one").run()
                            await gate.arrive()
                            await gate.waitOpen(orAfter: .seconds(60))
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        await gate.waitArrived(2)
        setup.receiver.verifySignatures(at: api.clock.now)
        let delivered = try await setup.dispatcher.runOnce()
        let stillHeld = await !gate.isOpen
        await gate.open()
        try await holders.value
        #expect(stillHeld, "the deliveries waited for the pool's connections")
        #expect(delivered.attempted == 3 && setup.receiver.acceptedEvents.count == 3)
    }

    @Test(
        "every kind of event arrives once, signed, with its data; an unattended payment expires and says so",
        arguments: StorageBackend.available
    )
    func everyEvent(backend: StorageBackend) async throws {
        try await Self.withSetup(
            backend: backend,
            configure: { configuration in
                configuration.maxFailedPaymentAttempts = 2
                // Each event must arrive exactly once: on a loaded machine a 0.5 s timeout (the setup's, then) had a delivery
                // to the receiver (which answers at once) given up and retried, and the test counted it twice.
                configuration.webhooks.timeout = 30
            },
            { setup in
                let api = setup.api
                let key = TestKey()
                let (tokens, deviceID) = try await api.enrolled(key)
                let paid = try await api.authorizeWithBiometrics(
                    try await api.createPayment(token: tokens.access),
                    key: key,
                    counter: 1,
                    token: tokens.access
                )
                #expect(paid["status"] == "authorized", "\(paid.raw)")
                let cancelled = try #require(try await api.createPayment(token: tokens.access, amountMinor: 100)["paymentId"])
                #expect(try await api.call(.post, "/v1/payments/\(cancelled)/cancellation", token: tokens.access).status == 200)
                let locked = try await api.createPayment(token: tokens.access, amountMinor: 200)
                for counter in [2, 3] as [UInt64] {
                    _ = try await api.authorizeWithBiometrics(locked, key: key, counter: counter, token: tokens.access) { $0.amount = 1 }
                }
                let unattended = try #require(try await api.createPayment(token: tokens.access, amountMinor: 300)["paymentId"])
                #expect(try await api.call(.delete, "/v1/devices/\(deviceID)", token: tokens.access).status == 204)
                try await api.createAccount("bob")
                for _ in 0..<5 {
                    _ = try await api.call(.post, "/v1/sessions", json: ["username": "bob", "password": "wrong", "installationId": "p"])
                }

                #expect(try await setup.deliver().attempted == 6, "nothing expired yet: six events so far")
                api.clock.advance(by: 301)
                let pass = try await setup.deliver()
                #expect(pass.expired == 1 && pass.attempted == 1, "the sweep expired the unattended payment: \(pass)")
                #expect(try await setup.deliver().attempted == 0, "nothing is due twice")

                let events = setup.receiver.acceptedEvents
                // Deliveries go out concurrently, so in no promised order (events carry createdAt).
                #expect(
                    Set(events.prefix(6).map(\.eventType)) == [
                        "device.registered", "payment.authorized", "payment.cancelled", "payment.locked", "device.revoked", "account.locked",
                    ]
                )
                #expect(events.last?.eventType == "payment.expired")
                #expect(setup.receiver.deliveries.count == 7 && events.allSatisfy(\.verified), "each once, each signature verifies")
                let authorized = try #require(events.first { $0.eventType == "payment.authorized" }).json
                #expect(authorized["type"] as? String == "payment.authorized" && (authorized["id"] as? String)?.hasPrefix("evt_") == true)
                let data = try #require(authorized["data"] as? [String: Any])
                #expect(
                    data["paymentId"] as? String == paid["paymentId"] && data["amountMinor"] as? Int == 8800 && data["currency"] as? String == "CNY"
                )
                #expect(data["payeeName"] as? String == "Coffee Shop" && data["status"] as? String == "authorized")
                #expect(
                    (data["receipt"] as? [String: Any])?["signature"] as? String == (paid.json["receipt"] as? [String: Any])?["signature"] as? String
                )
                #expect((data["receipt"] as? [String: Any])?["currencyExponent"] as? Int == 2, "the receipt verifies without a currency table")
                let expired = try #require(events.last?.json["data"] as? [String: Any])
                #expect(expired["paymentId"] as? String == unattended && expired["status"] as? String == "expired")
                let lock = try #require(events.first { $0.eventType == "account.locked" }?.json["data"] as? [String: Any])
                #expect(lock["lockedUntil"] is String && lock["accountId"] is String)
                // The expired payment reads as expired, and the app's pending list no longer has it.
                #expect(try await api.call(.get, "/v1/payments/\(unattended)", token: tokens.access)["status"] == "expired")

                let listed = try await api.call(
                    .get,
                    "/v1/service/webhook-endpoints/\(setup.endpoint)/deliveries",
                    token: try await setup.serviceToken()
                )
                let deliveries = try #require(listed.json["deliveries"] as? [[String: Any]])
                #expect(deliveries.count == 7 && deliveries.allSatisfy { $0["status"] as? String == "delivered" && $0["attempts"] as? Int == 1 })
            }
        )
    }

    @Test("an endpoint gets only the events it asked for; with no endpoint nothing is written", arguments: StorageBackend.available)
    func onlyWhatWasAskedFor(backend: StorageBackend) async throws {
        try await Self.withSetup(backend: backend, events: ["payment.authorized"]) { setup in
            // Another endpoint, which asked for other events only: it gets no delivery of this one.
            let other = try await setup.api.call(
                .post,
                "/v1/service/webhook-endpoints",
                json: ["url": setup.receiver.url.absoluteString, "events": ["device.revoked", "payment.expired"]],
                token: setup.service
            )
            try #require(other.status == 201, "\(other.raw)")
            let key = TestKey()
            let (tokens, _) = try await setup.api.enrolled(key)
            _ = try await setup.api.authorizeWithBiometrics(
                try await setup.api.createPayment(token: tokens.access),
                key: key,
                counter: 1,
                token: tokens.access
            )
            let deliveries = try await setup.api.database.transaction { db in
                try await db.raw("SELECT endpoint_id FROM webhook_deliveries").all().map { try $0.decode(column: "endpoint_id", as: String.self) }
            }
            #expect(deliveries == [setup.endpoint])
            try await setup.deliver()
            #expect(setup.receiver.acceptedEvents.map(\.eventType) == ["payment.authorized"])
            #expect(try await setup.api.call(.delete, "/v1/service/webhook-endpoints/\(setup.endpoint)", token: setup.service).status == 204)
            _ = try await setup.api.authorizeWithBiometrics(
                try await setup.api.createPayment(token: tokens.access, amountMinor: 5),
                key: key,
                counter: 2,
                token: tokens.access
            )
            let stored = try await setup.api.database.transaction { db in
                try await db.raw("SELECT COUNT(*) AS n FROM webhook_events").first()?.decode(column: "n", as: Int.self)
            }
            #expect(stored == 1, "no endpoint wants the second event, so it is not written")
        }
    }

    @Test(
        "a receiver that answers 500, closes the connection, then times out gets the event on the fourth try, on the backoff schedule",
        arguments: StorageBackend.available
    )
    func retries(backend: StorageBackend) async throws {
        try await Self.withSetup(backend: backend) { setup in
            let api = setup.api
            setup.receiver.script(.status(500), .close, .delayed(.seconds(60), status: 200))
            try await api.createAccount()
            let tokens = try await api.signIn()
            #expect(try await api.bind(TestKey(), token: tokens.access).status == 201)

            #expect(try await setup.deliver().attempted == 1)
            #expect(try await setup.deliver().attempted == 0, "not due again before the backoff")
            api.clock.advance(by: 7.9)
            #expect(try await setup.deliver().attempted == 0, "the first retry waits at least 8 s (10 s, jitter 0.8-1.2)")
            api.clock.advance(by: 4.2)
            #expect(try await setup.deliver().attempted == 1, "and at most 12 s")
            api.clock.advance(by: 15.9)
            #expect(try await setup.deliver().attempted == 0, "the second retry waits at least 16 s")
            api.clock.advance(by: 8.2)
            #expect(try await setup.deliver().attempted == 1, "the receiver times out")
            api.clock.advance(by: 48.1)
            #expect(try await setup.deliver().attempted == 1)

            #expect(setup.receiver.acceptedEvents.map(\.eventType) == ["device.registered"])
            let attempts = try await setup.attempts()
            #expect(attempts.map(\.attempt) == [1, 2, 3, 4])
            #expect(attempts.map(\.status) == [500, nil, nil, 200])
            // The owner sees "not delivered" for a 500, a closed connection and a timeout alike (the delivery list must not
            // map which ports answer); the detail is in the log and the metric, the status in the operator's record.
            #expect(attempts.prefix(3).allSatisfy { $0.error == "not delivered" } && attempts[3].error == nil, "\(attempts)")
            #expect(Set(setup.receiver.deliveries.map(\.eventID)).count == 1 && setup.receiver.deliveries.map(\.attempt).prefix(3) == [1, 2, 3])
            let listed = try await api.call(.get, "/v1/service/webhook-endpoints/\(setup.endpoint)/deliveries", token: setup.service)
            let delivery = try #require((listed.json["deliveries"] as? [[String: Any]])?.first)
            #expect(delivery["status"] as? String == "delivered" && delivery["attempts"] as? Int == 4, "\(listed.raw)")
        }
    }

    @Test("a receiver down for a day gets every event once it is back; one down for three days is given up")
    func downReceiver() async throws {
        try await Self.withSetup { setup in
            let api = setup.api
            await setup.receiver.stop()
            try await api.createAccount()
            let tokens = try await api.signIn()
            for _ in 0..<3 { #expect(try await api.bind(TestKey(), token: tokens.access).status == 201) }
            try await setup.deliver()
            for _ in 0..<8 {
                api.clock.advance(by: 3 * 3600)
                try await setup.deliver()
            }
            #expect(setup.receiver.deliveries.isEmpty)
            try await setup.receiver.restart()
            api.clock.advance(by: 6 * 3600 * 1.2 + 1)
            try await setup.deliver()
            #expect(setup.receiver.acceptedEvents.count == 3 && setup.receiver.deliveries.count == 3, "every event, once")

            // Now down for good: a new event is tried for three days, then given up.
            await setup.receiver.stop()
            let later = try await api.signIn()
            #expect(try await api.bind(TestKey(), token: later.access).status == 201)
            var passes = 0
            while passes < 600 {
                try await setup.deliver()
                api.clock.advance(by: 600)
                passes += 1
                let status = try await api.database.transaction { db in
                    try await db.raw("SELECT status FROM webhook_deliveries WHERE status <> 'delivered'").first()?.decode(
                        column: "status",
                        as: String.self
                    )
                }
                if status == "failed" { break }
            }
            let failed = try await api.call(
                .get,
                "/v1/service/webhook-endpoints/\(setup.endpoint)/deliveries?limit=1",
                token: try await setup.serviceToken()
            )
            let delivery = try #require((failed.json["deliveries"] as? [[String: Any]])?.first)
            #expect(delivery["status"] as? String == "failed" && delivery["lastError"] as? String == "not delivered", "\(failed.raw)")
            #expect(delivery["lastStatusCode"] == nil, "no status of a failed attempt: \(failed.raw)")
            // 10 s, 20 s, … doubling to 6 hours, then every 6 hours until 3 days: about 22 (looked at every 10 minutes here).
            #expect((18...26).contains(delivery["attempts"] as? Int ?? 0), "\(delivery)")
            // Given up at the last attempt whose successor would fall past 3 days: within 6 hours (+20 %) of the window's end.
            // The pass that gave up ran before the clock's last advance.
            #expect((64.8 * 3600...72 * 3600).contains(Double(passes - 1) * 600), "\(passes) passes")
            #expect(try await setup.deliver().attempted == 0, "a given-up delivery is not tried again")
        }
    }

    @Test("two instances on one database deliver each event once", arguments: StorageBackend.available)
    func twoInstances(backend: StorageBackend) async throws {
        try await Self.withSetup(backend: backend) { setup in
            try await setup.api.createAccount()
            let tokens = try await setup.api.signIn()
            for _ in 0..<12 { #expect(try await setup.api.bind(TestKey(), token: tokens.access).status == 201) }
            let other = WebhookDispatcher(service: setup.api.service)
            setup.receiver.verifySignatures(at: setup.api.clock.now)
            async let first = setup.dispatcher.runOnce()
            async let second = other.runOnce()
            let (a, b) = try await (first, second)
            #expect(a.attempted + b.attempted == 12, "\(a) \(b)")
            #expect(setup.receiver.deliveries.count == 12 && Set(setup.receiver.deliveries.map(\.eventID)).count == 12)
        }
    }

    @Test(
        "an instance that dies holding a delivery loses it to another when its lease ends: delivered, not lost",
        arguments: StorageBackend.available
    )
    func deadInstance(backend: StorageBackend) async throws {
        try await Self.withSetup(backend: backend) { setup in
            try await setup.api.createAccount()
            let tokens = try await setup.api.signIn()
            #expect(try await setup.api.bind(TestKey(), token: tokens.access).status == 201)
            // The first instance claims the delivery and dies before sending it.
            #expect(try await setup.dispatcher.claimDue(limit: 16).count == 1)
            let survivor = WebhookDispatcher(service: setup.api.service)
            setup.receiver.verifySignatures(at: setup.api.clock.now)
            #expect(try await survivor.runOnce().attempted == 0, "held by the first instance")
            setup.api.clock.advance(by: setup.api.service.configuration.webhooks.leaseDuration + 0.001)
            setup.receiver.verifySignatures(at: setup.api.clock.now)
            #expect(try await survivor.runOnce().attempted == 1)
            #expect(setup.receiver.acceptedEvents.map(\.attempt) == [2], "the lost attempt counts")
        }
    }

    @Test("a rotation signs with both secrets for the overlap, then with the new one only")
    func rotation() async throws {
        try await Self.withSetup { setup in
            let api = setup.api
            let rotated = try await api.call(.post, "/v1/service/webhook-endpoints/\(setup.endpoint)/secret-rotations", token: setup.service)
            #expect(rotated.status == 200, "\(rotated.raw)")
            let newSecret = try #require(rotated["secret"])
            #expect(newSecret != setup.secret && newSecret.hasPrefix("whsec_"))
            let listed = try await api.call(.get, "/v1/service/webhook-endpoints", token: setup.service)
            #expect(listed.raw.contains("previousSecretExpiresAt") && !listed.raw.contains(newSecret) && !listed.raw.contains(setup.secret))

            try await api.createAccount()
            let tokens = try await api.signIn()
            #expect(try await api.bind(TestKey(), token: tokens.access).status == 201)
            try await setup.deliver()
            let during = try #require(setup.receiver.deliveries.last)
            #expect(during.signatureHeader.components(separatedBy: "v1=").count == 3, "two signatures: \(during.signatureHeader)")
            let at = api.clock.now
            #expect((try? WebhookSignature(secret: setup.secret).verify(header: during.signatureHeader, body: during.body, now: at)) != nil)
            #expect((try? WebhookSignature(secret: newSecret).verify(header: during.signatureHeader, body: during.body, now: at)) != nil)

            api.clock.advance(by: 86_400 + 1)
            #expect(try await api.bind(TestKey(), token: try await api.signIn().access).status == 201)
            try await setup.deliver()
            let after = try #require(setup.receiver.deliveries.last)
            #expect(after.signatureHeader.components(separatedBy: "v1=").count == 2)
            #expect(throws: WebhookSignature.Failure.signatureMismatch) {
                try WebhookSignature(secret: setup.secret).verify(header: after.signatureHeader, body: after.body, now: api.clock.now)
            }
            #expect((try? WebhookSignature(secret: newSecret).verify(header: after.signatureHeader, body: after.body, now: api.clock.now)) != nil)
        }
    }

    @Test("refused with a stable code and nothing written: bad URLs and events, a user's token, a missing scope, another client's endpoint")
    func refusals() async throws {
        try await Self.withSetup { setup in
            let api = setup.api
            let before = try await Self.webhookRows(api)
            let badURLs = [
                "ftp://bank.example/hook", "http://bank.example/hook", "https://user:pw@bank.example/hook", "https://bank.example/hook#x",
                "https:///nohost", "bank.example/hook", "", "https://bank.example/" + String(repeating: "a", count: 2048), "https://bank.example/a b",
            ]
            for url in badURLs {
                let reply = try await api.call(
                    .post,
                    "/v1/service/webhook-endpoints",
                    json: ["url": url, "events": ["payment.authorized"]],
                    token: setup.service
                )
                #expect(reply.status == 400 && reply.code == "invalid_webhook_url", "\(url): \(reply.raw)")
            }
            for events in [[], ["payment.refunded"], ["Payment.Authorized"], ["payment.authorized", "payment.authorized"]] as [[String]] {
                let reply = try await api.call(
                    .post,
                    "/v1/service/webhook-endpoints",
                    json: ["url": "https://bank.example/hook", "events": events],
                    token: setup.service
                )
                #expect(reply.status == 400 && ["invalid_event_type", "malformed_request"].contains(reply.code ?? ""), "\(events): \(reply.raw)")
            }
            try await api.createAccount()
            let user = try await api.signIn()
            let asUser = try await api.call(
                .post,
                "/v1/service/webhook-endpoints",
                json: ["url": "https://bank.example/hook", "events": ["payment.authorized"]],
                token: user.access
            )
            #expect(asUser.status == 401 && asUser.code == "invalid_service_token")
            let payer = try await ServiceClients(database: api.database, clock: api.clock).create(name: "payer", scopes: ["payments:write"])
            let payerToken = try #require(try await api.serviceToken(payer)["access_token"])
            #expect(try await api.call(.get, "/v1/service/webhook-endpoints", token: payerToken).code == "insufficient_scope")
            let other = try await ServiceClients(database: api.database, clock: api.clock).create(name: "other", scopes: ["webhooks:write"])
            let otherToken = try #require(try await api.serviceToken(other)["access_token"])
            #expect(
                try await api.call(.delete, "/v1/service/webhook-endpoints/\(setup.endpoint)", token: otherToken).code == "webhook_endpoint_not_found"
            )
            #expect(
                try await api.call(.post, "/v1/service/webhook-endpoints/\(setup.endpoint)/secret-rotations", token: otherToken).code
                    == "webhook_endpoint_not_found"
            )
            #expect(
                try await api.call(.get, "/v1/service/webhook-endpoints/\(setup.endpoint)/deliveries", token: otherToken).code
                    == "webhook_endpoint_not_found"
            )
            let otherList = try await api.call(.get, "/v1/service/webhook-endpoints", token: otherToken)
            #expect((otherList.json["endpoints"] as? [Any])?.isEmpty == true, "a client sees only its own endpoints")
            #expect(try await Self.webhookRows(api) == before, "nothing about webhooks was written")
            // https and loopback http are accepted; the limit is 20 per client. The first asks for every type at once (the
            // contract's maxItems is the number of types).
            for index in 1..<20 {
                let url = index.isMultiple(of: 2) ? "https://bank.example/hook/\(index)" : "http://localhost:9/hook/\(index)"
                let events = index == 1 ? WebhookEventType.allCases.map(\.rawValue) : ["payment.authorized"]
                #expect(
                    try await api.call(
                        .post,
                        "/v1/service/webhook-endpoints",
                        json: ["url": url, "events": events],
                        token: setup.service
                    ).status == 201
                )
            }
            let over = try await api.call(
                .post,
                "/v1/service/webhook-endpoints",
                json: ["url": "https://bank.example/21", "events": ["payment.authorized"]],
                token: setup.service
            )
            #expect(over.status == 422 && over.code == "webhook_endpoint_limit")
        }
    }

    @Test(
        "retention purges an event with its deliveries and attempts 30 days after they ended, as its dry run said, and keeps one still being tried",
        arguments: StorageBackend.available
    )
    func retention(backend: StorageBackend) async throws {
        try await Self.withSetup(backend: backend) { setup in
            let api = setup.api
            try await api.createAccount()
            #expect(try await api.bind(TestKey(), token: try await api.signIn().access).status == 201)
            try await setup.deliver()  // delivered
            api.clock.advance(by: 29 * 86_400)
            await setup.receiver.stop()
            #expect(try await api.bind(TestKey(), token: try await api.signIn().access).status == 201)
            try await setup.deliver()  // failed once, pending
            api.clock.advance(by: 2 * 86_400)
            let retention = Retention(database: api.database, configuration: api.service.configuration, clock: api.clock)
            // The attempts go with their delivery (a dependent of its rule, by both key columns), and the event with its last
            // delivery, in the same run: the dry run counts them all.
            let planned = try await retention.dryRun()
            let report = try #require(try await retention.purge())
            #expect(report.counts[.webhookEvents] == 1 && report.counts[.webhookDeliveries] == 1 && report.counts[.webhookAttempts] == 1, "\(report)")
            #expect(planned == report, "the dry run said what the purge did: \(planned) vs \(report)")
            #expect(try await retention.dryRun().total == 0, "nothing left to purge")
            let left = try await Self.webhookRows(api)
            #expect(left[2...] == [1, 1], "the pending event and its delivery stay: \(left)")
            let attempts = try await api.database.transaction { db in
                try await db.raw("SELECT COUNT(*) AS n FROM webhook_attempts").first()?.decode(column: "n", as: Int.self)
            }
            #expect(attempts == 1, "the pending delivery keeps its attempt")
        }
    }

    static func webhookRows(_ api: API) async throws -> [Int] {
        try await api.database.transaction { db in
            var counts: [Int] = []
            for table in ["webhook_endpoints", "webhook_secrets", "webhook_events", "webhook_deliveries"] {
                counts.append(
                    try await db.raw(SQLQueryString("SELECT COUNT(*) AS n FROM \(unsafeRaw: table)")).first()?.decode(column: "n", as: Int.self) ?? -1
                )
            }
            return counts
        }
    }
}

/// Webhook secrets are needed in clear to sign, so they cannot be hashed; in a leaked dump they would let anyone forge
/// `payment.authorized` to the bank. They are sealed under the PIN key file, bound to their endpoint.
extension WebhookTests {
    static func storedSecrets(_ api: API) async throws -> [(id: String, endpoint: String, secret: String)] {
        try await api.database.transaction { db in
            try await db.raw("SELECT id, endpoint_id, secret FROM webhook_secrets ORDER BY created_at, id").all().map {
                (
                    try $0.decode(column: "id", as: String.self), try $0.decode(column: "endpoint_id", as: String.self),
                    try $0.decode(column: "secret", as: String.self)
                )
            }
        }
    }

    /// Alice binds a phone: one `device.registered` event.
    static func oneEvent(_ api: API) async throws {
        try await api.createAccount()
        #expect(try await api.bind(TestKey(), token: try await api.signIn().access).status == 201)
    }

    @Test(
        "the database holds no webhook secret in clear, before or after a rotation, and deliveries still verify",
        arguments: StorageBackend.available
    )
    func secretsSealed(backend: StorageBackend) async throws {
        try await Self.withSetup(backend: backend) { setup in
            let api = setup.api
            let rotated = try #require(
                try await api.call(.post, "/v1/service/webhook-endpoints/\(setup.endpoint)/secret-rotations", token: setup.service)["secret"]
            )
            let stored = try await Self.storedSecrets(api)
            #expect(stored.count == 2)
            for row in stored {
                #expect(row.secret.hasPrefix("v1.") && !row.secret.contains("whsec_"), "\(row.secret)")
            }
            let dump = stored.map(\.secret).joined()
            #expect(!dump.contains(setup.secret.dropFirst(6)) && !dump.contains(rotated.dropFirst(6)))
            try await Self.oneEvent(api)
            try await setup.deliver()
            let delivery = try #require(setup.receiver.deliveries.last)
            #expect((try? WebhookSignature(secret: rotated).verify(header: delivery.signatureHeader, body: delivery.body, now: api.clock.now)) != nil)
            #expect(
                (try? WebhookSignature(secret: setup.secret).verify(header: delivery.signatureHeader, body: delivery.body, now: api.clock.now)) != nil
            )
        }
    }

    @Test("secrets stored in clear by an earlier version are sealed at start-up and keep signing; a start with another PIN key is refused")
    func legacySecretsSealed() async throws {
        try await Self.withSetup { setup in
            let api = setup.api
            let row = try #require(try await Self.storedSecrets(api).first)
            try await api.database.transaction { db in
                try await db.raw("UPDATE webhook_secrets SET secret = \(bind: setup.secret) WHERE id = \(bind: row.id)").run()
            }
            // Before start-up seals it, the clear secret still signs (an upgrade does not stop deliveries).
            try await Self.oneEvent(api)
            try await setup.deliver()
            #expect(setup.receiver.deliveries.count == 1)
            #expect(try await api.service.sealLegacyWebhookSecrets() == 1)
            #expect(try await api.service.sealLegacyWebhookSecrets() == 0)
            #expect(try await Self.storedSecrets(api).first?.secret.hasPrefix("v1.") == true)
            #expect(try await api.bind(TestKey(), token: try await api.signIn().access).status == 201)
            try await setup.deliver()
            let delivery = try #require(setup.receiver.deliveries.last)
            #expect(setup.receiver.deliveries.count == 2)
            #expect(
                (try? WebhookSignature(secret: setup.secret).verify(header: delivery.signatureHeader, body: delivery.body, now: api.clock.now)) != nil
            )

            // Another PIN key file cannot open them: start-up stops, naming the file.
            let other = BioAuthService(
                configuration: api.service.configuration,
                database: api.database,
                clock: api.clock,
                random: api.service.random,
                passwords: api.service.passwords,
                receipts: api.service.receipts,
                sealers: Sealers(SecretSealer(key: .init(size: .bits256))),
                logger: api.service.logger,
                metrics: api.service.metrics
            )
            let refused = await #expect(throws: ConfigurationError.self) { try await other.sealLegacyWebhookSecrets() }
            #expect(refused?.message.contains("PIN key") == true)
        }
    }

    @Test("a sealed secret copied onto another endpoint's row does not open there: that endpoint gets nothing, never an unsigned delivery")
    func movedSecretRefused() async throws {
        try await Self.withSetup { setup in
            let api = setup.api
            // A second endpoint of the same client, at a second receiver that trusts nothing.
            let second = try await LoopbackWebhookReceiver.start()
            let created = try await api.call(
                .post,
                "/v1/service/webhook-endpoints",
                json: ["url": second.url.absoluteString, "events": ["device.registered"]],
                token: setup.service
            )
            let secondEndpoint = try #require(created["endpointId"])
            let first = try #require(try await Self.storedSecrets(api).first { $0.endpoint == setup.endpoint })
            try await api.database.transaction { db in
                try await db.raw("UPDATE webhook_secrets SET secret = \(bind: first.secret) WHERE endpoint_id = \(bind: secondEndpoint)").run()
            }
            try await Self.oneEvent(api)
            try await setup.deliver()
            #expect(setup.receiver.deliveries.count == 1, "the first endpoint's own secret still opens and signs")
            #expect(second.deliveries.isEmpty, "nothing is sent to the endpoint whose secret does not open")
            let attempts = try await setup.attempts()
            let refused = attempts.filter { $0.error?.contains("no signing secret opens") == true }
            #expect(refused.count == 1 && refused.first?.status == nil, "\(attempts)")
            await second.stop()
        }
    }
}

extension WebhookTests {
    @Test("a secret whose overlap ended is deleted at the next rotation, and a deleted endpoint's secrets go with it")
    func secretsDeleted() async throws {
        try await Self.withSetup { setup in
            let api = setup.api
            #expect(try await api.call(.post, "/v1/service/webhook-endpoints/\(setup.endpoint)/secret-rotations", token: setup.service).status == 200)
            #expect(try await Self.storedSecrets(api).count == 2, "the first secret signs during the overlap")
            api.clock.advance(by: 86_400 + 1)
            let service = try await setup.serviceToken()
            #expect(try await api.call(.post, "/v1/service/webhook-endpoints/\(setup.endpoint)/secret-rotations", token: service).status == 200)
            #expect(try await Self.storedSecrets(api).count == 2, "the first secret, past its overlap, is gone; the second overlaps the third")
            #expect(try await api.call(.delete, "/v1/service/webhook-endpoints/\(setup.endpoint)", token: service).status == 204)
            #expect(try await Self.storedSecrets(api).isEmpty)
        }
    }
}
