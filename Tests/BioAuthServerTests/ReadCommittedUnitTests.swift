import BioAuthCore
import Foundation
import Logging
import SQLKit
import Testing

@testable import BioAuthServer

/// The hot units of work run at READ COMMITTED on PostgreSQL (``TransactionIsolation``). What SERIALIZABLE gave them for
/// free they now get from increments, conditional updates and row locks; these are the races that would show it if not.
@Suite("READ COMMITTED units of work")
struct ReadCommittedUnitTests {
    @Test(
        "a unit of work whose statements each commit on their own keeps the writes before a failure on PostgreSQL (no transaction); SQLite rolls the unit back",
        arguments: StorageBackend.available
    )
    func eachStatementCommits(backend: StorageBackend) async throws {
        let test = try await TestDatabase.make(backend)
        let database = try await openDatabase(test.location, logger: Logger(label: "each-statement"))
        struct Stop: Error {}
        await #expect(throws: Stop.self) {
            try await database.transaction(isolation: .eachStatement) { db in
                try await db.run(FixedSQL("INSERT INTO rate_limits (bucket, window_start, hits) VALUES (?, ?, 1)")("each", Int64(1)))
                throw Stop()
            }
        }
        let kept = try await database.transaction { db in try await db.select().column("bucket").from("rate_limits").all().count }
        #expect(kept == (backend == .postgres ? 1 : 0))
        try await database.close()
        await test.drop()
    }

    @Test("wrong authorizations that arrive together all count; the payment locks, once", arguments: StorageBackend.available)
    func failuresAllCount(backend: StorageBackend) async throws {
        try await TestServer.run(backend: backend, configure: { $0.maxFailedPaymentAttempts = 3 }, Self.failuresAllCount)
    }

    static func failuresAllCount(_ api: API) async throws {
        let key = TestKey()
        let (tokens, _) = try await api.enrolled(key)
        let payment = try await api.createPayment(token: tokens.access)
        let paymentID = try #require(payment["paymentId"])
        // One challenge per attempt, issued while the payment is still pending.
        var challenges: [Reply] = []
        for _ in 0..<6 {
            let issued = try await api.call(.post, "/v1/payments/\(paymentID)/challenges", json: ["keyId": key.keyID], token: tokens.access)
            try #require(issued.status == 201)
            challenges.append(issued)
        }
        let issued = challenges
        // Each signs another payee's name than the one shown: a transaction mismatch, which counts as a failure.
        let statuses = try await StorageConformanceTests.concurrently(6) { index in
            try await api.authorizeWithBiometrics(
                payment,
                key: key,
                counter: UInt64(index + 1),
                token: tokens.access,
                challenge: issued[index],
                tamper: { $0.payeeName = "Tea House" }
            )
        }
        #expect(statuses.allSatisfy { $0 == 401 || $0 == 423 }, "\(statuses)")
        #expect(statuses.filter { $0 == 401 }.count >= 3)
        let after = try await api.call(.get, "/v1/payments/\(paymentID)", token: tokens.access)
        #expect(after["status"] == "locked")
        let locks = try await api.database.transaction { db in
            try await db.select().column(SQLFunction("COUNT", args: SQLLiteral.all), as: "n").from("audit_events")
                .where("kind", .equal, "payment_locked").where("payment_id", .equal, paymentID).first()?
                .decode(column: "n", as: Int.self)
        }
        #expect(locks == 1)
    }

    @Test("a device revoked while its key signs in: the sign-in that read it before waits on its row, then is refused")
    func revocationOrdersSignIn() async throws {
        guard StorageBackend.available.contains(.postgres) else { return }
        try await TestServer.run(backend: .postgres) { api in
            let key = TestKey()
            let (_, deviceID) = try await api.enrolled(key)
            let challenge = try await api.signInChallenge(key)
            let (revoking, started) = AsyncStream.makeStream(of: Void.self)
            let database = api.database
            let clock = api.clock
            // The revocation: its update of the device's row is made and held, uncommitted, until the sign-in waits on it.
            let revocation = Task {
                try await database.transaction { db in
                    try await db.devices.markRevoked(deviceID, at: clock.now.millisecondsSince1970)
                    started.yield()
                    for _ in 0..<300 {
                        let waiting = try await database.standalone { other in
                            try await other.raw("SELECT COUNT(*) AS n FROM pg_locks WHERE NOT granted").first()?.decode(column: "n", as: Int.self)
                        }
                        if (waiting ?? 0) > 0 { break }
                        try await Task.sleep(for: .milliseconds(100))
                    }
                }
            }
            var iterator = revoking.makeAsyncIterator()
            _ = await iterator.next()
            // Reads the device as not revoked (the revocation is not committed), then waits on its row at the counter.
            let signIn = try await api.biometricSignIn(key, counter: 1, challenge: challenge)
            try await revocation.value
            #expect(signIn.status == 403 && signIn.code == "device_revoked", "\(signIn.raw)")
            let live = try await api.database.transaction { db in
                try await db.select().column(SQLFunction("COUNT", args: SQLLiteral.all), as: "n").from("sessions")
                    .where("device_id", .equal, deviceID).where("ended_at", .is, SQLLiteral.null).first()?.decode(column: "n", as: Int.self)
            }
            #expect(live == 0)
        }
    }
}
