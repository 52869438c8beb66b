import Foundation
import NIOConcurrencyHelpers
import SQLKit
import TestTools
import Testing

@testable import BioAuthServer

/// The retention purge deletes exactly what has aged out, never what is still live, on every engine.
@Suite("Retention")
struct RetentionTests {
    /// Tokens kept 1 day after expiry or the end of their session, audit events 1 day, idempotency keys 24 hours.
    static func policy(_ configuration: inout ServerConfiguration) {
        configuration.retention.tokens = 86_400
        configuration.retention.auditEvents = 86_400
        configuration.retention.idempotencyKeys = 86_400
    }

    @Test("a purge deletes what aged out, keeps what is live, and the dry run said the same beforehand", arguments: StorageBackend.available)
    func purge(backend: StorageBackend) async throws {
        try await TestServer.run(backend: backend, configure: Self.policy) { api in
            // Two days ago: alice binds a phone and refreshes once (the first refresh token is now rotated); bob signs in
            // and out; alice asks for a sign-in challenge and creates a payment with an idempotency key.
            let key = TestKey()
            let (first, _) = try await api.enrolled(key)
            let refreshed = Tokens(try await api.call(.post, "/v1/sessions/refresh", json: ["refreshToken": first.refresh]))
            try await api.createAccount("bob")
            let bob = try await api.signIn("bob")
            #expect(try await api.call(.delete, "/v1/sessions/current", token: bob.access).status == 204)
            let oldChallenge = try #require(try await api.signInChallenge(key)["challengeId"])
            let oldPayment = try await api.createPayment(token: refreshed.access, idempotencyKey: "order-1")
            #expect(oldPayment.status == 201)

            api.clock.advance(by: 2 * 86_400)
            // Now: carol signs in and asks for a challenge; alice creates a payment with another key.
            try await api.createAccount("carol")
            let carol = try await api.signIn("carol", installation: "carol-phone")
            let carolKey = TestKey()
            let carolDevice = try await api.register(carolKey, token: carol.access)
            #expect(carolDevice.status == 201)
            let liveChallenge = try #require(try await api.signInChallenge(carolKey)["challengeId"])
            let aliceNow = Tokens(try await api.call(.post, "/v1/sessions/refresh", json: ["refreshToken": refreshed.refresh]))
            #expect(try await api.createPayment(token: aliceNow.access, idempotencyKey: "order-2").status == 201)
            let auditBefore = try await api.count("audit_events")

            let retention = Retention(database: api.database, configuration: api.service.configuration, clock: api.clock)
            let planned = try await retention.dryRun()
            #expect(try await api.count("audit_events") == auditBefore, "a dry run deletes nothing")
            let purged = try #require(try await retention.purge())
            #expect(purged == planned, "the dry run said what the purge did: \(planned) vs \(purged)")
            #expect(try await retention.dryRun().total == 0, "nothing left to purge")

            // Gone: the expired challenge, the old idempotency key, bob's tokens (his session ended two days ago), the
            // access tokens that expired two days ago, the old audit events and rate-limit windows.
            #expect(try await api.count("challenges", "id", oldChallenge) == 0)
            #expect(try await api.count("idempotency_keys", "idempotency_key", "order-1") == 0)
            #expect(try await api.count("refresh_tokens", "token_hash", BioAuthService.tokenHash(bob.refresh)) == 0)
            #expect(try await api.count("access_tokens", "token_hash", BioAuthService.tokenHash(refreshed.access)) == 0)
            #expect(try await api.count("sessions", "id", bob.sessionID) == 0, "bob's session ended two days ago and has no token left")
            #expect(purged.counts[.auditEvents]! > 0 && purged.counts[.rateLimits]! > 0 && purged.counts[.challenges]! >= 2)
            #expect(try await api.count("audit_events") == auditBefore - purged.counts[.auditEvents]!)

            // Kept: everything live.
            #expect(try await api.count("challenges", "id", liveChallenge) == 1)
            #expect(try await api.count("idempotency_keys", "idempotency_key", "order-2") == 1)
            #expect(try await api.call(.get, "/v1/me", token: carol.access).status == 200)
            #expect(try await api.count("sessions", "id", aliceNow.sessionID) == 1, "alice's live session stays, with its rotated tokens")
            #expect(try await api.call(.get, "/v1/me", token: aliceNow.access).status == 200)
            // Alice's rotated refresh tokens have not expired: presenting one still counts as reuse and ends the session.
            #expect(try await api.count("refresh_tokens", "token_hash", BioAuthService.tokenHash(first.refresh)) == 1)
            #expect(try await api.call(.post, "/v1/sessions/refresh", json: ["refreshToken": first.refresh]).code == "refresh_token_reused")
            // The purged idempotency key is free again: a different body makes a new payment instead of a 422.
            let reused = try await api.createPayment(token: carol.access, amountMinor: 100, idempotencyKey: "order-1")
            #expect(reused.status == 201)
        }
    }

    @Test(
        "one instance at a time: a purge skips while another holds the lease, and runs once it has run out",
        arguments: StorageBackend.available
    )
    func lease(backend: StorageBackend) async throws {
        try await TestServer.run(backend: backend) { api in
            let now = api.clock.now.millisecondsSince1970
            try await api.database.transaction { db in
                try await db.raw(
                    "INSERT INTO maintenance_leases (name, holder, expires_at) VALUES ('retention', 'other-instance', \(bind: now + 60_000))"
                ).run()
            }
            let retention = Retention(database: api.database, configuration: api.service.configuration, clock: api.clock)
            #expect(try await retention.purge() == nil, "another instance is purging")
            api.clock.advance(by: 61)
            #expect(try await retention.purge() != nil, "its lease ran out: this one purges")
            let holder = try await api.database.transaction { db in
                try await db.raw("SELECT holder, expires_at FROM maintenance_leases WHERE name = 'retention'").first()
            }
            #expect(try holder?.decode(column: "expires_at", as: Int64.self) == 0, "released when done")
        }
    }

    @Test("the background job purges on its interval and logs what it deleted")
    func backgroundJob() async throws {
        let sink = LogSink()
        try await TestServer.run(
            logLevel: .info,
            logSink: sink,
            configure: { $0.retention.interval = 0.2 },
            { api in
                try await api.createAccount()
                _ = try await api.signIn()
                api.clock.advance(by: 3600)
                // Up to 30 s: a loaded machine may run the 0.2 s interval late; a passing run waits a fraction of a second.
                for _ in 0..<300 where !sink.text.contains("retention purged") { try await Task.sleep(for: .milliseconds(100)) }
                #expect(sink.text.contains("retention purged"), "\(sink.text.suffix(2000))")
            }
        )
    }

    @Test("a bad retention setting stops start-up with a message naming it")
    func badSettings() {
        for (change, message) in [
            ({ (c: inout ServerConfiguration) in c.retention.interval = -1 }, "retention interval must be 0 (off) or positive"),
            ({ (c: inout ServerConfiguration) in c.retention.tokens = -1 }, "token retention must not be negative"),
            ({ (c: inout ServerConfiguration) in c.retention.idempotencyKeys = 60 }, "idempotency key retention must be at least 1 hour"),
            ({ (c: inout ServerConfiguration) in c.retention.auditEvents = 3600 }, "audit retention must be at least 1 day"),
        ] {
            var configuration = ServerConfiguration()
            change(&configuration)
            let error = #expect(throws: ConfigurationError.self) { try configuration.validate() }
            #expect(error?.message == message)
        }
    }
}

extension API {
    /// Rows of `table`, or only those whose `column` is `value`.
    func count(_ table: String, _ column: String? = nil, _ value: String? = nil) async throws -> Int {
        try await database.transaction { db in
            let row: (any SQLRow)?
            if let column, let value {
                row = try await db.raw("SELECT COUNT(*) AS n FROM \(unsafeRaw: table) WHERE \(unsafeRaw: column) = \(bind: value)").first()
            } else {
                row = try await db.raw("SELECT COUNT(*) AS n FROM \(unsafeRaw: table)").first()
            }
            return try row?.decode(column: "n", as: Int.self) ?? 0
        }
    }
}

extension RetentionTests {
    @Test(
        "an abandoned session (never signed out, its refresh token expired long ago) goes with its tokens; a used one stays",
        arguments: StorageBackend.available
    )
    func abandonedSessions(backend: StorageBackend) async throws {
        try await TestServer.run(backend: backend, configure: Self.policy) { api in
            try await api.createAccount("dora")
            let abandoned = try await api.signIn("dora", installation: "old-phone")
            api.clock.advance(by: api.service.configuration.refreshTokenLifetime + 2 * 86_400)
            let current = try await api.signIn("dora", installation: "new-phone")
            let retention = Retention(database: api.database, configuration: api.service.configuration, clock: api.clock)
            let planned = try await retention.dryRun()
            let purged = try #require(try await retention.purge())
            #expect(purged == planned && purged.counts[.sessions] == 1, "\(purged)")
            #expect(try await api.count("sessions", "id", abandoned.sessionID) == 0)
            #expect(try await api.count("sessions", "id", current.sessionID) == 1)
            #expect(try await api.call(.get, "/v1/me", token: current.access).status == 200)
        }
    }
}

extension RetentionTests {
    @Test(
        "console sessions go once they have been over (signed out or timed out) for the token retention; a live or recently ended one stays",
        arguments: StorageBackend.available
    )
    func operatorSessions(backend: StorageBackend) async throws {
        try await TestServer.run(backend: backend, configure: Self.policy) { api in
            let operators = Operators(service: api.service)
            let mei = try await operators.create(name: "mei", role: .support, password: "correct horse battery")
            let sessions = ConsoleSessions(service: api.service)
            // Two days ago: one session signed out, one left to time out.
            let signedOut = try await sessions.start(for: mei)
            try await sessions.end(signedOut)
            let timedOut = try await sessions.start(for: mei)
            api.clock.advance(by: 2 * 86_400)
            // Now: one live, one signed out a moment ago.
            let live = try await sessions.start(for: mei)
            let endedNow = try await sessions.start(for: mei)
            try await sessions.end(endedNow)

            let retention = Retention(database: api.database, configuration: api.service.configuration, clock: api.clock)
            let planned = try await retention.dryRun()
            let purged = try #require(try await retention.purge())
            #expect(purged == planned && purged.counts[.operatorSessions] == 2, "\(purged)")
            for (token, kept) in [(signedOut, false), (timedOut, false), (live, true), (endedNow, true)] {
                #expect(try await api.count("operator_sessions", "token_hash", BioAuthService.tokenHash(token)) == (kept ? 1 : 0))
            }
            #expect(try await sessions.session(live)?.operator.id == mei.id, "the live session still signs the operator in")

            // A busy session, last used 4 minutes before its 8 hours ran out: over at 8 hours, not 15 minutes after its last
            // use. A day and a minute later it goes (by the idle rule alone it would stay 10 minutes longer).
            let busy = try await sessions.start(for: mei)
            for _ in 0..<34 {  // a request every 14 minutes, the last 7 h 56 min after sign-in
                api.clock.advance(by: 840)
                #expect(try await sessions.session(busy) != nil)
            }
            api.clock.advance(by: 8 * 3600 - 34 * 840 - 60)
            api.clock.advance(by: 60 + 86_400 + 60)
            #expect(try await sessions.session(busy) == nil, "past its absolute limit")
            _ = try #require(try await retention.purge())
            #expect(try await api.count("operator_sessions", "token_hash", BioAuthService.tokenHash(busy)) == 0)
        }
    }
}

extension RetentionTests {
    /// ``policy(_:)`` with the web sign-in page on (its QR codes).
    static func policyWithWebPage(_ configuration: inout ServerConfiguration) {
        policy(&configuration)
        QRSignInTests.configure(&configuration)
    }

    @Test(
        "the web page's old QR codes go with the tokens; approval requests stay for the audit retention, and a live one is kept",
        arguments: StorageBackend.available
    )
    func qrCodesAndApprovals(backend: StorageBackend) async throws {
        try await TestServer.run(backend: backend, configure: Self.policyWithWebPage) { api in
            let client = try await ApprovalTests.callCentre(api)
            let key = TestKey()
            let (user, _) = try await api.enrolled(key)
            let drawn = try await api.call(.post, "/v1/qr-sign-ins")
            let scanned = try await api.call(.post, "/v1/qr-sign-ins/scans", json: ["url": try #require(drawn["url"])], token: user.access)
            #expect(scanned.status == 201)
            _ = try await api.call(.post, "/v1/qr-sign-ins")  // never scanned
            #expect(try await api.backchannel(client, ["login_hint": "alice", "binding_message": "Add payee Tea Garden"]).status == 200)

            api.clock.advance(by: 2 * 86_400)
            _ = try await api.call(.post, "/v1/qr-sign-ins")  // drawn now: live
            #expect(try await api.backchannel(client, ["login_hint": "alice", "binding_message": "Add payee Coffee Shop"]).status == 200)
            let retention = Retention(database: api.database, configuration: api.service.configuration, clock: api.clock)
            let purged = try #require(try await retention.purge())
            #expect(purged.counts[.qrSignIns] == 2 && purged.counts[.approvals] == 2, "\(purged)")
            #expect(try await api.count("qr_sign_ins") == 1)
            #expect(try await api.count("approvals") == 1)
            #expect(try await api.count("approvals", "binding_message", "Add payee Coffee Shop") == 1, "the live request stays")
        }
    }
}

extension RetentionTests {
    /// The waits a purge made between batches, in order.
    final class Rests: @unchecked Sendable {
        private let lock = NSLock()
        private var taken: [Duration] = []
        func add(_ rest: Duration) { lock.withLock { taken.append(rest) } }
        var all: [Duration] { lock.withLock { taken } }
    }

    @Test(
        "a purge rests after each full batch, as long as the batch took times the setting, in slices; none after the last, none with 0",
        arguments: StorageBackend.available
    )
    func restsBetweenBatches(backend: StorageBackend) async throws {
        try await TestServer.run(backend: backend, configure: Self.policy) { api in
            var configuration = api.service.configuration
            configuration.retention.batchSize = 1000
            for (ratio, rested) in [(3.0, true), (0.0, false)] {
                // Two full batches and a last one of 500.
                try await Self.fillPassedWindows(2500, api: api)
                configuration.retention.batchRest = ratio
                let rests = Rests()
                let retention = Retention(database: api.database, configuration: configuration, clock: api.clock, metrics: nil) { rests.add($0) }
                let started = ContinuousClock.now
                let purged = try #require(try await retention.purge())
                let took = ContinuousClock.now - started
                // The rests were the batches' time times the ratio, so at most the ratio times the whole purge's.
                #expect(rests.all.reduce(.zero, +) <= took * ratio, "\(rests.all) in \(took)")
                let left = try await api.count("rate_limits")
                #expect(purged.counts[.rateLimits] == 2500 && left == 0, "\(purged)")
                #expect(rests.all.allSatisfy { $0 > .zero && $0 <= Retention.restSlice }, "\(rests.all)")
                // Every full batch took some time, so with a rest it waited; nothing else in this database fills a batch.
                #expect(rests.all.isEmpty != rested, "ratio \(ratio): \(rests.all)")
            }
        }
    }

    @Test(
        "on PostgreSQL a purge batch checks each row again as it deletes it: a rate-limit window a hit restarted while the batch waited for the row is kept",
        .enabled(if: TestTool.ready(.postgres), Comment(rawValue: TestTool.missing(.postgres)))
    )
    func purgeRechecksRowsUpdatedMeanwhile() async throws {
        try await TestServer.run(backend: .postgres, configure: Self.policy) { api in
            try await Self.fillPassedWindows(3, api: api)
            let now = api.clock.now.millisecondsSince1970
            // A hit restarts old-1's window and keeps the row locked until the purge has found it and waits for it.
            let purged = try await Self.purge(api: api) { db in _ = try await db.rateLimits.hit("old-1", now: now, window: 60_000) }
            #expect(purged.counts[.rateLimits] == 2, "\(purged)")
            let left = try await api.database.transaction { db in
                try await db.raw("SELECT bucket, window_start, hits FROM rate_limits").all().map {
                    (
                        try $0.decode(column: "bucket", as: String.self), try $0.decode(column: "window_start", as: Int64.self),
                        try $0.decode(column: "hits", as: Int64.self)
                    )
                }
            }
            #expect(left.count == 1 && left.first?.0 == "old-1" && left.first?.1 == now && left.first?.2 == 1, "the hit's window: \(left)")
        }
    }

    @Test(
        "on PostgreSQL an abandoned session that a sign-in ends while the purge waits for it is kept: a batch with dependents locks and checks its rows before it deletes anything",
        .enabled(if: TestTool.ready(.postgres), Comment(rawValue: TestTool.missing(.postgres)))
    )
    func abandonedSessionEndedMeanwhileIsKept() async throws {
        try await TestServer.run(backend: .postgres, configure: Self.policy) { api in
            try await api.createAccount("dana")
            let now = api.clock.now.millisecondsSince1970
            let day: Int64 = 86_400_000
            // Dana's session from three days ago was never ended, and its tokens expired two days ago: abandoned.
            try await api.database.transaction { db in
                let account = try await db.raw("SELECT id FROM accounts WHERE username = 'dana'").first()?.decode(column: "id", as: String.self)
                try await db.raw(
                    """
                    INSERT INTO sessions (id, account_id, installation_id, method, created_at) \
                    VALUES ('abandoned', \(bind: account), 'dana-phone', 'password', \(bind: now - 3 * day))
                    """
                ).run()
                try await db.raw("INSERT INTO refresh_tokens (token_hash, session_id, expires_at) VALUES ('r', 'abandoned', \(bind: now - 2 * day))")
                    .run()
            }
            // A sign-in on that phone ends it, and holds the row until the purge waits for it.
            let purged = try await Self.purge(api: api) { db in
                try await db.raw("UPDATE sessions SET ended_at = \(bind: now), end_reason = 'replaced' WHERE id = 'abandoned'").run()
            }
            #expect(purged.counts[.sessions] == 0, "\(purged)")
            #expect(purged.counts[.refreshTokens] == 1, "the expired token went by its expiry, before the sessions")
            #expect(try await api.count("sessions", "id", "abandoned") == 1, "ended just now: kept for the token retention")
        }
    }

    /// A purge on PostgreSQL while a unit of work that ran `hold` keeps the rows it changed locked: the unit commits once a
    /// batch of the purge waits for one of them. Returns what the purge deleted.
    static func purge(api: API, whileHolding hold: @escaping @Sendable (any SQLDatabase) async throws -> Void) async throws -> Retention.Report {
        let gate = TestGate()
        let holder = Task {
            try await api.database.transaction(isolation: .readCommitted) { db in
                try await hold(db)
                await gate.arrive()
                await gate.waitOpen(orAfter: .seconds(60))
            }
        }
        await gate.waitArrived(1)
        let retention = Retention(database: api.database, configuration: api.service.configuration, clock: api.clock, metrics: nil)
        let purge = Task { try await retention.purge() }
        try await WebhookTests.waitUntil("the purge's batch waits for the held row") {
            try await api.database.transaction(isolation: .eachStatement) { db in
                try await db.raw("SELECT COUNT(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")
                    .first()?.decode(column: "n", as: Int.self)
            } == 1
        }
        await gate.open()
        try await holder.value
        return try #require(try await purge.value)
    }

    /// The server's configuration with batches of `size` rows (`nil`: the engine's) and a rest so short that each full batch
    /// is followed by exactly one call of the purger's rest.
    static func oneRestPerBatch(_ api: API, size: Int?) -> ServerConfiguration {
        var configuration = api.service.configuration
        configuration.retention.batchRest = 0.001
        configuration.retention.batchSize = size
        return configuration
    }

    /// Purges `api`'s database under `configuration`, counting the rate-limit windows left at each of the purger's rests
    /// (with ``oneRestPerBatch(_:size:)``, after each full batch).
    static func purgeCountingWindowsLeft(_ api: API, _ configuration: ServerConfiguration) async throws -> (Retention.Report, [Int?]) {
        let left = NIOLockedValueBox<[Int?]>([])
        let purger = Retention(database: api.database, configuration: configuration, clock: api.clock, metrics: nil) { _ in
            let count = try? await api.count("rate_limits")
            left.withLockedValue { $0.append(count) }
        }
        let purged = try #require(try await purger.purge())
        return (purged, left.withLockedValue { $0 })
    }

    /// `count` rate-limit windows that passed long ago, for a purge to delete.
    static func fillPassedWindows(_ count: Int, api: API) async throws {
        try await api.database.transaction { db in
            for first in stride(from: 0, to: count, by: 500) {
                let values = (first..<min(count, first + 500)).map { "('old-\($0)', 0, 1)" }.joined(separator: ", ")
                try await db.raw("INSERT INTO rate_limits (bucket, window_start, hits) VALUES \(unsafeRaw: values)").run()
            }
        }
    }

    @Test(
        "a purge renews its lease between batches once a minute, not before each; one that stalled past its lease, which another instance then took, stops",
        arguments: StorageBackend.available
    )
    func leaseRenewal(backend: StorageBackend) async throws {
        try await TestServer.run(backend: backend, configure: Self.policy) { api in
            let configuration = Self.oneRestPerBatch(api, size: 1000)
            @Sendable func leaseExpiry() async -> Int64? {
                try? await api.database.transaction { db in
                    let row = try await db.raw("SELECT expires_at FROM maintenance_leases WHERE name = 'retention'").first()
                    return try row?.decode(column: "expires_at", as: Int64.self)
                }
            }
            // Four full batches, 20 s apart by the purge's clock: the lease is renewed once, after a minute.
            try await Self.fillPassedWindows(4500, api: api)
            let claimed = api.clock.now.millisecondsSince1970 + Int64(Retention.leaseDuration * 1000)
            let expiries = NIOLockedValueBox<[Int64?]>([])
            let purger = Retention(database: api.database, configuration: configuration, clock: api.clock, metrics: nil) { _ in
                let expiry = await leaseExpiry()
                expiries.withLockedValue { $0.append(expiry) }
                api.clock.advance(by: 20)
            }
            #expect(try await purger.purge()?.counts[.rateLimits] == 4500)
            #expect(expiries.withLockedValue { $0 } == [claimed, claimed, claimed, claimed + 60_000])
            // This purger stalls for 11 minutes after its first batch, and another instance claims the lease that ran out.
            try await Self.fillPassedWindows(2500, api: api)
            let stalled = Retention(database: api.database, configuration: configuration, clock: api.clock, metrics: nil) { _ in
                api.clock.advance(by: 660)
                let now = api.clock.now.millisecondsSince1970
                _ = try? await api.database.transaction { db in
                    try await db.maintenanceLeases.claim("retention", holder: "other-instance", now: now, until: now + 600_000)
                }
            }
            await #expect(throws: RetentionError.self) { try await stalled.purge() }
            #expect(try await api.count("rate_limits") == 1500, "it stopped after its first batch")
            let holder = try await api.database.transaction { db in
                try await db.raw("SELECT holder FROM maintenance_leases WHERE name = 'retention'").first()?.decode(column: "holder", as: String.self)
            }
            #expect(holder == "other-instance", "the lease stays with the instance that took it")
        }
    }

    @Test(
        "a purge deletes as many rows per batch as its batch size says (250 rows in batches of 100 leave 150, then 50), and unless set, its engine's: 50 on PostgreSQL, 10 on SQLite",
        arguments: StorageBackend.available
    )
    func batchSize(backend: StorageBackend) async throws {
        try await TestServer.run(backend: backend, configure: Self.policy) { api in
            try await Self.fillPassedWindows(250, api: api)
            var (purged, left) = try await Self.purgeCountingWindowsLeft(api, Self.oneRestPerBatch(api, size: 100))
            #expect(purged.counts[.rateLimits] == 250, "\(purged)")
            #expect(left == [150, 50], "the rows left after each full batch")
            #expect(try await api.count("rate_limits") == 0)

            try await Self.fillPassedWindows(120, api: api)
            #expect(api.service.configuration.retention.batchSize == nil)
            (purged, left) = try await Self.purgeCountingWindowsLeft(api, Self.oneRestPerBatch(api, size: nil))
            #expect(purged.counts[.rateLimits] == 120, "\(purged)")
            let expected: [Int?] = backend == .sqlite ? Array(stride(from: 110, through: 0, by: -10)) : [70, 20]
            #expect(left == expected, "the rows left after each full batch of the engine's size")
        }
    }

    @Test("the batch size is 10-10000 rows; unless set, the engine's: 50 on PostgreSQL, 10 on SQLite")
    func batchSizeSetting() throws {
        #expect(RetentionPolicy().batchSize == nil)
        #expect(RetentionPolicy().batchSize(on: .postgres) == 50 && RetentionPolicy().batchSize(on: .sqlite) == 10)
        var set = RetentionPolicy()
        set.batchSize = 200
        #expect(set.batchSize(on: .postgres) == 200 && set.batchSize(on: .sqlite) == 200, "a size set is used on both engines")
        for bad in [0, 9, 10_001, -1000] {
            var configuration = ServerConfiguration()
            configuration.retention.batchSize = bad
            let error = #expect(throws: ConfigurationError.self) { try configuration.validate() }
            #expect(error?.message == "retention batch size must be 10-10000 rows")
        }
        for good in [10, 50, 100, 10_000] {
            var configuration = ServerConfiguration()
            configuration.retention.batchSize = good
            try configuration.validate()
        }
    }

    @Test("the batch rest is a multiple of each batch's time, 0-10")
    func batchRestSetting() {
        #expect(RetentionPolicy().batchRest == 2)
        for bad in [-1.0, 11, .nan, .infinity] {
            var configuration = ServerConfiguration()
            configuration.retention.batchRest = bad
            let error = #expect(throws: ConfigurationError.self) { try configuration.validate() }
            #expect(error?.message == "retention batch rest must be 0-10 (times each batch's duration)")
        }
    }
}
