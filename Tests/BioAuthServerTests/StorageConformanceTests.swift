import BioAuthCore
import BioAuthTesting
import Foundation
import Logging
import NIOConcurrencyHelpers
import SQLKit
import Testing

@testable import BioAuthServer

/// The same storage behaviour on every engine: SQLite always, PostgreSQL when `BIOAUTH_TEST_POSTGRES_URL` is
/// set. Each case runs the server's own requests, many at once where the guarantee is about concurrency.
@Suite("Storage conformance")
struct StorageConformanceTests {
    /// Runs `count` copies of `body` at once; returns their HTTP statuses, sorted.
    static func concurrently(_ count: Int, _ body: @escaping @Sendable (Int) async throws -> Reply) async throws -> [Int] {
        try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<count { group.addTask { try await body(index).status } }
            var statuses: [Int] = []
            for try await status in group { statuses.append(status) }
            return statuses.sorted()
        }
    }

    @Test("migrations: a second open applies nothing and changes nothing, and no open logs a warning", arguments: StorageBackend.available)
    func migrations(backend: StorageBackend) async throws {
        // A file, not memory, for SQLite: the second open must see what the first wrote.
        let location = try await TestDatabase.make(backend)
        let path =
            backend == .sqlite ? FileManager.default.temporaryDirectory.appendingPathComponent("conf-\(UUID()).sqlite").path : location.location
        // PostgresNIO warned at every start that the pool was used before it ran; an operator sees a clean start.
        let log = LogSink()
        let logger = Logger(label: "conformance") { _ in CapturingLogHandler(sink: log) }
        let first = try await openDatabase(path, logger: logger)
        let versions = try await first.transaction { db in
            try await db.select().column("version").from("schema_migrations").orderBy("version").all().map {
                try $0.decode(column: "version", as: Int.self)
            }
        }
        #expect(versions == Migrations.all.map(\.version))
        // Several instances starting at once apply each migration once.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<3 { group.addTask { try await openDatabase(path, logger: logger).close() } }
            try await group.waitForAll()
        }
        let after = try await first.transaction { db in try await db.select().column("version").from("schema_migrations").all().count }
        #expect(after == versions.count)
        let complaints = log.text.split(separator: "\n").filter { ["warning", "error", "critical"].contains($0.split(separator: " ").first ?? "") }
        #expect(complaints.isEmpty, "starting on \(backend) logged: \(complaints)")
        try await first.close()
        if backend == .sqlite { try? FileManager.default.removeItem(atPath: path) }
        await location.drop()
    }

    @Test(
        "row identifiers are time-ordered on SQLite (fewer pages per commit) and random on PostgreSQL (fewer serialization conflicts)",
        arguments: StorageBackend.available
    )
    func identifiers(backend: StorageBackend) async throws {
        try await TestServer.run(backend: backend) { api in
            let reply = try await api.call(.post, "/v1/accounts", json: ["username": "dora", "password": "correct horse"])
            let id = try #require(reply["accountId"])
            #expect(Validation.isIssuedID(id))
            // The version is the first digit of the third group.
            #expect(id.split(separator: "-")[2].first == (backend == .sqlite ? "7" : "4"), "\(id)")
        }
    }

    @Test("a username is taken once, even by concurrent sign-ups", arguments: StorageBackend.available)
    func uniqueUsernames(backend: StorageBackend) async throws {
        try await TestServer.run(backend: backend) { api in
            let statuses = try await Self.concurrently(8) { _ in
                try await api.call(.post, "/v1/accounts", json: ["username": "carol", "password": "correct horse"])
            }
            #expect(statuses == [201] + Array(repeating: 409, count: 7))
        }
    }

    @Test("a challenge is used once, even by concurrent sign-ins", arguments: StorageBackend.available)
    func challengeOnce(backend: StorageBackend) async throws {
        try await TestServer.run(backend: backend) { api in
            let key = TestKey()
            _ = try await api.enrolled(key)
            let challenge = try await api.signInChallenge(key)
            let statuses = try await Self.concurrently(8) { index in
                try await api.biometricSignIn(key, counter: UInt64(index + 1), challenge: challenge)
            }
            #expect(statuses.filter { $0 == 201 }.count == 1)
            #expect(statuses.filter { $0 != 201 }.allSatisfy { $0 == 409 || $0 == 401 })
        }
    }

    @Test("a payment is authorized exactly once under concurrent authorizations", arguments: StorageBackend.available)
    func paymentOnce(backend: StorageBackend) async throws {
        try await TestServer.run(backend: backend) { api in
            let key = TestKey()
            let (tokens, _) = try await api.enrolled(key)
            let payment = try await api.createPayment(token: tokens.access)
            let paymentID = try #require(payment["paymentId"])
            var challenges: [Reply] = []
            for _ in 0..<8 {
                challenges.append(try await api.call(.post, "/v1/payments/\(paymentID)/challenges", json: ["keyId": key.keyID], token: tokens.access))
            }
            let issued = challenges
            let statuses = try await Self.concurrently(8) { index in
                try await api.authorizeWithBiometrics(payment, key: key, counter: UInt64(index + 1), token: tokens.access, challenge: issued[index])
            }
            #expect(statuses.filter { $0 == 200 }.count == 1, "\(statuses)")
            let receipts = try await api.database.transaction { db in
                try await db.select().column("receipt").from("payments").where("id", .equal, paymentID).all()
            }
            #expect(receipts.count == 1)
        }
    }

    @Test("an idempotency key creates one payment, even for concurrent retries", arguments: StorageBackend.available)
    func idempotency(backend: StorageBackend) async throws {
        try await TestServer.run(backend: backend) { api in
            try await api.createAccount()
            let tokens = try await api.signIn()
            let statuses = try await Self.concurrently(6) { _ in try await api.createPayment(token: tokens.access, idempotencyKey: "order-7") }
            #expect(statuses.allSatisfy { $0 == 201 || $0 == 200 }, "\(statuses)")
            let count = try await api.database.transaction { db in try await db.select().column("id").from("payments").all().count }
            #expect(count == 1)
            #expect(try await api.createPayment(token: tokens.access, amountMinor: 1, idempotencyKey: "order-7").code == "idempotency_key_reused")
            // A retry is first tried as a new payment, which finds the key taken and is undone whole: one payment, one event.
            let created = try await api.database.transaction { db in
                try await db.select().column("id").from("audit_events").where("kind", .equal, "payment_created").all().count
            }
            #expect(created == 1)
            // What a request that lost the race meets (on PostgreSQL a customer's payment is created at READ COMMITTED): the
            // key's insert writes nothing and says so, and the unit of work runs again and replays the stored response.
            let (recorded, keys) = try await api.database.transaction { db in
                let stored = try #require(try await db.select().columns("account_id", "payment_id").from("idempotency_keys").first())
                let account = try stored.decode(column: "account_id", as: String.self)
                let payment = try #require(try await db.payments.find(try stored.decode(column: "payment_id", as: String.self), account: account))
                var changed = payment
                changed.memo = "another"
                let recorded = try await db.idempotencyKeys.insert(account: account, key: "order-7", requestHash: "x", response: changed, at: 1)
                return (
                    recorded,
                    try await db.select().column("response").from("idempotency_keys").all().map { try $0.decode(column: "response", as: String.self) }
                )
            }
            #expect(!recorded && keys.count == 1 && !keys[0].contains("another"))
        }
    }

    @Test("counters only grow; lockouts persist; the audit log stays in order", arguments: StorageBackend.available)
    func countersLockoutsAudit(backend: StorageBackend) async throws {
        try await TestServer.run(backend: backend) { api in
            let key = TestKey()
            _ = try await api.enrolled(key)
            #expect(try await api.biometricSignIn(key, counter: 5).status == 201)
            #expect(try await api.biometricSignIn(key, counter: 5).code == "counter_not_increasing")
            try await api.createAccount("dave")
            for _ in 0..<5 {
                _ = try await api.call(.post, "/v1/sessions", json: ["username": "dave", "password": "wrong password", "installationId": "p"])
            }
            #expect(
                try await api.call(.post, "/v1/sessions", json: ["username": "dave", "password": "correct horse", "installationId": "p"]).code
                    == "account_locked"
            )
            let sequences = try await api.database.transaction { db in
                try await db.select().column("sequence").from("audit_events").orderBy("sequence").all().map {
                    try $0.decode(column: "sequence", as: Int64.self)
                }
            }
            // Strictly increasing and unique; gapless on SQLite (one transaction at a time).
            #expect(sequences == sequences.sorted() && Set(sequences).count == sequences.count && !sequences.isEmpty)
            if backend == .sqlite { #expect(sequences == Array(1...Int64(sequences.count))) }
        }
    }
}

extension StorageConformanceTests {
    @Test("sign-in challenges are rate limited per key in the database; the window resets", arguments: StorageBackend.available)
    func rateLimits(backend: StorageBackend) async throws {
        try await TestServer.run(
            backend: backend,
            configure: { $0.signInChallengesPerWindow = 3 },
            { api in
                let key = TestKey()
                _ = try await api.enrolled(key)
                for _ in 0..<3 { #expect(try await api.signInChallenge(key).status == 201) }
                let limited = try await api.signInChallenge(key)
                #expect(limited.status == 429 && limited.code == "rate_limited")
                #expect(try await api.signInChallenge(TestKey()).code == "device_not_found")  // other keys are not counted here
                api.clock.advance(by: 61)
                #expect(try await api.signInChallenge(key).status == 201)
                // A server clock set back before the window's start restarts the window rather than locking the key out.
                for _ in 0..<2 { #expect(try await api.signInChallenge(key).status == 201) }
                #expect(try await api.signInChallenge(key).code == "rate_limited")
                api.clock.advance(by: -10)
                #expect(try await api.signInChallenge(key).status == 201)
            }
        )
    }

    @Test(
        "an address's hit and a key's in one call: the key's is counted only while the address has room; windows restart",
        arguments: StorageBackend.available
    )
    func twoHits(backend: StorageBackend) async throws {
        try await TestServer.run(backend: backend) { api in
            let engine = api.database.dialect
            /// The key's window start and hits when the address had room; else when it has room again.
            func hit(_ key: String, at now: Int64) async throws -> [Int64?] {
                let counted = try await api.database.transaction(isolation: .eachStatement) { db in
                    try await db.rateLimits.hit(shared: "address", limit: 3, then: key, now: now, window: 60_000, engine: engine)
                }
                switch counted {
                case .counted(let bucket): return [bucket?.windowStart, bucket?.hits]
                case .full(let until): return [until]
                }
            }
            #expect(try await hit("key-a", at: 1_000) == [1_000, 1])
            #expect(try await hit("key-a", at: 2_000) == [1_000, 2])
            #expect(try await hit("key-b", at: 3_000) == [3_000, 1])
            // Past the address's limit: nothing counted, the key's hit neither, until the first window ends.
            #expect(try await hit("key-a", at: 4_000) == [61_000])
            #expect(try await hit("key-c", at: 5_000) == [61_000])
            let keyC = try await api.database.transaction { db in try await db.rateLimits.hits("key-c", now: 5_000, window: 60_000) }
            #expect(keyC == nil, "no row for a key refused at its address")
            // The address's first window has ended (on PostgreSQL, the row of the first hit); key-a's restarts with it.
            #expect(try await hit("key-a", at: 61_000) == [61_000, 1])
            // SQLite's one window restarted whole; PostgreSQL's other two rows are full until their own windows end.
            #expect(try await hit("key-b", at: 61_500) == (backend == .postgres ? [62_000] : [3_000, 2]))
        }
    }

    @Test("requests arriving together cannot get past a rate limit", arguments: StorageBackend.available)
    func rateLimitsUnderConcurrency(backend: StorageBackend) async throws {
        try await TestServer.run(
            backend: backend,
            configure: { $0.signInChallengesPerWindow = 5 },
            { api in
                let key = TestKey()
                _ = try await api.enrolled(key)
                let statuses = try await Self.concurrently(20) { _ in try await api.signInChallenge(key) }
                #expect(statuses == Array(repeating: 201, count: 5) + Array(repeating: 429, count: 15))
                // The next window serves the key again.
                api.clock.advance(by: 61)
                #expect(try await api.signInChallenge(key).status == 201)
            }
        )
    }

    @Test(
        "a client address's limit, counted outside the unit of work in several rows on PostgreSQL and one on SQLite, lets exactly its limit through when requests arrive together",
        arguments: StorageBackend.available
    )
    func sharedRateLimitRows(backend: StorageBackend) async throws {
        try await TestServer.run(
            backend: backend,
            configure: {
                $0.signInChallengesPerClient = 8
                $0.signInChallengesPerWindow = 100
            },
            { api in
                // Customers behind one address (a carrier-grade NAT): the per-address bucket is the shared one.
                var keys: [TestKey] = []
                for customer in 0..<24 {
                    let key = TestKey()
                    _ = try await api.enrolled(key, username: "customer\(customer)", installation: "phone-\(customer)")
                    keys.append(key)
                }
                // More requests at once than there are rows: most find their row full and look for another.
                let snapshot = keys
                let statuses = try await Self.concurrently(24) { index in try await api.signInChallenge(snapshot[index]) }
                #expect(statuses == Array(repeating: 201, count: 8) + Array(repeating: 429, count: 16))
                let rows = try await api.database.transaction { db in
                    try await db.raw("SELECT hits FROM rate_limits WHERE bucket LIKE 'signin-challenge-client:%'").all()
                        .map { try $0.decode(column: "hits", as: Int.self) }
                }
                // PostgreSQL: eight rows, each with its share of one; no row takes every hit.
                #expect(rows.sorted() == (backend == .postgres ? Array(repeating: 1, count: 8) : [8]), "\(rows)")

                // Room comes back as windows end, and a refusal says when.
                api.clock.advance(by: 61)
                for index in 0..<4 { #expect(try await api.signInChallenge(keys[index]).status == 201) }
                api.clock.advance(by: 30)
                for index in 4..<8 { #expect(try await api.signInChallenge(keys[index]).status == 201) }
                let refused = try await api.signInChallenge(keys[8])
                #expect(refused.status == 429 && refused.headers[.retryAfter] == "30", "\(refused.headers)")
                api.clock.advance(by: 30)
                // SQLite's one row started its window with the first of the eight and restarts whole. On PostgreSQL each row
                // has a window of its own, from its first hit: only the four rows filled 60 s ago have room again.
                var allowed = 0
                for index in 8..<24 where try await api.signInChallenge(keys[index]).status == 201 { allowed += 1 }
                #expect(allowed == (backend == .postgres ? 4 : 8))
            }
        )
    }

    @Test(
        "a challenge's use and a counter's advance are conditional updates: the loser of a race changes nothing",
        arguments: StorageBackend.available
    )
    func conditionalGuards(backend: StorageBackend) async throws {
        // What a second request that read the same row before the first committed does (possible below SERIALIZABLE):
        // its update finds the row already moved on, and reports so instead of writing.
        try await TestServer.run(backend: backend) { api in
            let key = TestKey()
            _ = try await api.enrolled(key)
            let challenge = try await api.signInChallenge(key)
            let id = try #require(challenge["challengeId"])
            let keyID = key.keyIDBytes
            let (first, second, advanced, regressed, counter) = try await api.database.transaction { db in
                let first = try await db.challenges.markConsumed(id, at: 1)
                let second = try await db.challenges.markConsumed(id, at: 2)
                let device = try #require(try await db.devices.find(keyID: keyID))
                let advanced = try await db.devices.advanceCounter(device.id, to: device.counter + 5, at: 3)
                let regressed = try await db.devices.advanceCounter(device.id, to: device.counter + 4, at: 4)
                let counter = try #require(try await db.devices.find(keyID: keyID)).counter
                return (first, second, advanced, regressed, counter - device.counter)
            }
            #expect(first && !second)
            #expect(advanced && !regressed && counter == 5)
        }
    }

    @Test(
        "a challenge is taken in one statement only while live; one handed back can be taken again",
        arguments: StorageBackend.available
    )
    func takeChallenge(backend: StorageBackend) async throws {
        try await TestServer.run(backend: backend) { api in
            let key = TestKey()
            _ = try await api.enrolled(key)
            let challenge = try await api.signInChallenge(key)
            let id = try #require(challenge["challengeId"])
            let stored = try #require(try await api.database.transaction { db in try await db.challenges.find(id) })
            let expiry = stored.use.expiresAt.millisecondsSince1970
            let outcome = try await api.database.transaction { db in
                // Past its expiry: not taken, and still unused.
                let late = try await db.challenges.take(id, at: expiry)
                let unusedAfterLate = try await db.challenges.find(id)?.use.consumed == false
                let first = try await db.challenges.take(id, at: expiry - 1)
                let second = try await db.challenges.take(id, at: expiry - 1)
                try await db.challenges.release(id)
                let unusedAfterRelease = try await db.challenges.find(id)?.use.consumed == false
                let again = try await db.challenges.take(id, at: expiry - 1)
                return (late == nil, unusedAfterLate, first, second == nil, unusedAfterRelease, again != nil)
            }
            #expect(outcome.0 && outcome.1)
            let first = try #require(outcome.2)
            #expect(first.challenge == stored.challenge && first.deviceID == stored.deviceID && first.purpose == "login")
            #expect(!first.use.consumed && first.use.expiresAt == stored.use.expiresAt)
            #expect(outcome.3, "a taken challenge cannot be taken twice")
            #expect(outcome.4 && outcome.5, "a challenge handed back is unused and can be taken again")
            #expect(try await api.database.transaction { db in try await db.challenges.find(id) }?.use.consumed == true)
        }
    }

    @Test(
        "an audit event's log line is written once its unit of work commits: none for a unit rolled back, one for a unit run again",
        arguments: StorageBackend.available
    )
    func auditLogAfterCommit(backend: StorageBackend) async throws {
        let location = try await TestDatabase.make(backend)
        let log = LogSink()
        let logger = Logger(label: "conformance") { _ in CapturingLogHandler(sink: log) }
        let database = try await openDatabase(location.location, logger: logger)
        let recorder = ChangeRecorder(
            clock: ManualClock(),
            random: SystemRandomSource(),
            dialect: database.dialect,
            webhookRetryWindow: 3600,
            logger: logger
        )
        // Rolled back whole, as the unit that advances a counter first is when a check then fails.
        await #expect(throws: CheckBeforeWriting.self) {
            try await database.transaction(isolation: .readCommitted) { db in
                try await recorder.audit(AuditKind.biometricSignIn, succeeded: false, account: nil, code: "unit_rolled_back", on: db)
                throw CheckBeforeWriting()
            }
        }
        try await database.transaction { db in
            try await recorder.audit(AuditKind.biometricSignIn, succeeded: true, account: nil, code: "unit_committed", on: db)
        }
        // On PostgreSQL a unit that finds a concurrent one got there first is rolled back and run again (SQLite runs one
        // unit at a time): its first run's event is neither stored nor told.
        let runs = NIOLockedValueBox(0)
        if backend == .postgres {
            try await database.transaction(isolation: .readCommitted) { db in
                let run = runs.withLockedValue { runs in
                    runs += 1
                    return runs
                }
                try await recorder.audit(AuditKind.biometricSignIn, succeeded: true, account: nil, code: "unit_run_again", on: db)
                if run == 1 { throw ConcurrentUnitConflict() }
            }
            #expect(runs.withLockedValue { $0 } == 2)
        }
        let lines = log.text.split(separator: "\n").filter { $0.hasPrefix("info audit ") }
        let stored = try await database.transaction { db in
            try await db.raw("SELECT code FROM audit_events").all().map { try $0.decode(column: "code", as: String?.self) ?? "-" }
        }
        for (code, expected) in [("unit_rolled_back", 0), ("unit_committed", 1), ("unit_run_again", backend == .postgres ? 1 : 0)] {
            #expect(lines.filter { $0.contains(code) }.count == expected, "log lines for \(code) on \(backend): \(lines)")
            #expect(stored.filter { $0 == code }.count == expected, "events stored for \(code) on \(backend)")
        }
        try await database.close()
        await location.drop()
    }
}
