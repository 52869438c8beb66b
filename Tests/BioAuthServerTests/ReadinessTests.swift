import Foundation
import NIOConcurrencyHelpers
import SQLKit
import TestTools
import Testing

@testable import BioAuthServer

/// `/healthz` says the process is alive; `/readyz` says whether it can serve, and flips while the database is away.
@Suite("Liveness and readiness")
struct ReadinessTests {
    @Test("readiness flips to 503 not_ready while the database fails or hangs, and back; liveness stays 200")
    func sqliteOutage() async throws {
        let outage = Outage()
        try await TestServer.run(
            .live,
            wrapDatabase: { OutageDatabase(base: $0, outage: outage) },
            { api in
                #expect(try await api.call(.get, "/readyz").status == 200)

                outage.set(.failing)
                let failing = try await api.call(.get, "/readyz")
                #expect(failing.status == 503)
                #expect(failing.code == "not_ready")
                #expect(try await api.call(.get, "/healthz").status == 200)

                outage.set(.hanging)
                let start = ContinuousClock.now
                #expect(try await api.call(.get, "/readyz").code == "not_ready")
                let waited = ContinuousClock.now - start
                // The database still hangs (until the outage ends), yet the probe answered: it waited its timeout, not
                // for the database.
                #expect(waited >= BioAuthService.readinessTimeout, "the probe waits its timeout: \(waited)")
                #expect(outage.hung > 0, "the database is still hanging")
                #expect(try await api.call(.get, "/healthz").status == 200)

                outage.set(.none)
                #expect(try await api.call(.get, "/readyz").status == 200)
            }
        )
    }

    @Test(
        "on PostgreSQL: readiness is 503 while the database refuses connections, 200 again once it accepts them",
        .enabled(if: TestTool.ready(.postgres), Comment(rawValue: TestTool.missing(.postgres)))
    )
    func postgresOutage() async throws {
        try await TestServer.run(.live, backend: .postgres) { api in
            #expect(try await api.call(.get, "/readyz").status == 200)
            let name = try await api.database.transaction { db in
                try await db.raw("SELECT current_database() AS name").first()!.decode(column: "name", as: String.self)
            }
            let admin = try #require(StorageBackend.postgresURL)
            try await TestDatabase.admin(admin) { db in
                try await db.raw("ALTER DATABASE \(ident: name) ALLOW_CONNECTIONS false").run()
                try await db.raw("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = \(bind: name)").run()
            }
            let down = try await api.call(.get, "/readyz")
            #expect(down.status == 503 && down.code == "not_ready", "\(down.raw)")
            #expect(try await api.call(.get, "/healthz").status == 200)

            try await TestDatabase.admin(admin) { db in try await db.raw("ALTER DATABASE \(ident: name) ALLOW_CONNECTIONS true").run() }
            var status = 0
            for _ in 0..<30 where status != 200 {
                status = try await api.call(.get, "/readyz").status
                if status != 200 { try await Task.sleep(for: .milliseconds(500)) }
            }
            #expect(status == 200, "ready again once the database accepts connections")
        }
    }
}

/// Whether the test database is away, and how.
final class Outage: Sendable {
    enum Mode { case none, failing, hanging }
    private let state = NIOLockedValueBox<(mode: Mode, hung: [CheckedContinuation<Void, Never>])>((.none, []))

    /// Changes the outage; leaving `.hanging` releases the units of work it holds.
    func set(_ new: Mode) {
        let released = state.withLockedValue { state in
            state.mode = new
            guard new != .hanging else { return [CheckedContinuation<Void, Never>]() }
            defer { state.hung = [] }
            return state.hung
        }
        for unit in released { unit.resume() }
    }

    var current: Mode { state.withLockedValue { $0.mode } }

    /// Units of work held now.
    var hung: Int { state.withLockedValue { $0.hung.count } }

    /// Waits until the outage stops hanging (at once if it already has).
    func hang() async {
        await withCheckedContinuation { continuation in
            let held = state.withLockedValue { state in
                guard state.mode == .hanging else { return false }
                state.hung.append(continuation)
                return true
            }
            if !held { continuation.resume() }
        }
    }
}

/// A database that fails at once, or does not answer until the outage ends, while its ``Outage`` says so.
struct OutageDatabase: DatabaseExecutor {
    struct Unreachable: Error {}
    let base: any DatabaseExecutor
    let outage: Outage
    var dialect: DatabaseDialect { base.dialect }

    func transaction<R: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        switch outage.current {
        case .none: return try await base.transaction(body)
        case .failing: throw Unreachable()
        case .hanging:
            await outage.hang()
            throw Unreachable()
        }
    }

    func close() async throws { try await base.close() }
}
