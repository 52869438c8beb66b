import Foundation
import HTTPTypes
import Logging
import SQLKit
import Testing

@testable import BioAuthServer

/// `GET /metrics` on its own listener, scraped over HTTP while requests are made, on every storage engine.
@Suite("Metrics")
struct MetricsTests {
    @Test("metrics appear and move as requests are made, and no label names a user, token or account", arguments: StorageBackend.available)
    func metricsMove(backend: StorageBackend) async throws {
        try await TestServer.run(
            .live,
            backend: backend,
            configure: { $0.metricsPort = 0 },
            { api in
                let port = try #require(await api.metricsPorts.first { _ in true })
                let before = try await Self.scrape(port)
                #expect(before.status == 200)
                #expect(before.contentType == "text/plain; version=0.0.4; charset=utf-8")
                #expect(before.value("process_resident_memory_bytes").map { $0 > 1_000_000 } == true, "\(before.text)")
                #expect(before.value("process_open_fds").map { $0 > 0 } == true)
                #expect(before.value("process_cpu_seconds_total").map { $0 > 0 } == true)
                let started = try #require(before.value("process_start_time_seconds"), "\(before.text)")
                #expect(abs(started - Date().timeIntervalSince1970) < 3600, "the process started within the hour: \(started)")
                #expect(!before.text.contains("bioauth_process_"), "the standard process_* names only")
                // Series with known labels exist before their first event, at zero: alerts and rates work from the start.
                #expect(before.value(#"bioauth_retention_runs_total{outcome="completed"}"#) == 0, "\(before.text)")
                #expect(before.value("bioauth_retention_last_completed_timestamp_seconds") == 0)
                #expect(before.value(#"bioauth_retention_deleted_total{kind="audit_events"}"#) == 0)
                #expect(before.value(#"bioauth_webhook_attempts_total{outcome="failed"}"#) == 0)
                #expect(before.value(#"bioauth_rate_limit_refusals_total{limit="signin_client"}"#) == 0)
                #expect(before.value(#"bioauth_payment_authorizations_total{method="pin",outcome="success"}"#) == 0)
                #expect(before.value("bioauth_payments_expired_total") == 0)
                // Every metric says what it means: a # HELP line right before its # TYPE line.
                let lines = before.text.split(separator: "\n").map(String.init)
                for (index, line) in lines.enumerated() where line.hasPrefix("# TYPE ") {
                    let name = line.dropFirst(7).prefix { $0 != " " }
                    #expect(index > 0 && lines[index - 1].hasPrefix("# HELP \(name) ") && lines[index - 1].count > 10 + name.count, "\(name)")
                }

                let key = TestKey()
                let (tokens, _) = try await api.enrolled(key, username: "metrics-alice")
                let accountID = try #require(try await api.call(.get, "/v1/me", token: tokens.access)["accountId"])
                let wrong = try await api.call(
                    .post,
                    "/v1/sessions",
                    json: [
                        "username": "metrics-alice", "password": "not the password", "installationId": "phone-2",
                    ]
                )
                #expect(wrong.code == "invalid_credentials")
                #expect(try await api.biometricSignIn(key, counter: 1).status == 201)
                #expect(try await api.call(.get, "/no/such/path").code == "not_found")
                #expect(try await api.call(.get, "/metrics").code == "not_found", "the public listener never serves metrics")
                // Methods the HTTP parser knows beyond the API's (WebDAV's): counted, under one label.
                for other in ["PROPFIND", "MKCOL"] {
                    _ = try await api.call(HTTPRequest.Method(other)!, "/healthz")
                }
                // A request that is not HTTP at all is refused before any route: counted as a problem all the same.
                let apiPort = try #require(api.client.port)
                let garbage = try await RawHTTPConnection.offPool { try RawHTTPConnection.exchange(port: apiPort, Array("HELLO THERE\r\n\r\n".utf8)) }
                #expect(RawHTTPConnection.parse(garbage)?.status == 400)

                let after = try await Self.scrape(port)
                let requests = #"bioauth_http_requests_total{method="POST",route="/v1/sessions",status="201"}"#
                #expect(after.value(requests) == 1, "\(after.text)")
                #expect(after.value(#"bioauth_http_requests_total{method="POST",route="/v1/sessions",status="401"}"#) == 1)
                #expect(after.value(#"bioauth_http_requests_total{method="GET",route="unmatched",status="404"}"#) == 2)
                #expect(after.value(#"bioauth_http_request_duration_seconds_count{method="POST",route="/v1/sessions"}"#) == 2)
                #expect(after.value(#"bioauth_http_requests_total{method="other",route="unmatched",status="405"}"#) == 2, "\(after.text)")
                #expect(!after.text.contains("PROPFIND") && !after.text.contains("MKCOL"))
                #expect(after.value(#"bioauth_sign_ins_total{method="password",outcome="success"}"#) == 1)
                #expect(after.value(#"bioauth_sign_ins_total{method="password",outcome="invalid_credentials"}"#) == 1)
                #expect(after.value(#"bioauth_sign_ins_total{method="biometric",outcome="success"}"#) == 1)
                #expect(after.value(#"bioauth_problems_total{code="invalid_credentials"}"#) == 1)
                #expect(after.value(#"bioauth_problems_total{code="not_found"}"#) == 2)
                #expect(after.value(#"bioauth_problems_total{code="malformed_request"}"#) == 1, "\(after.text)")
                #expect(after.value(#"bioauth_challenges_issued_total{purpose="login"}"#) == 1)
                #expect(after.value(#"bioauth_challenges_issued_total{purpose="register"}"#) == 1)
                #expect(after.value("bioauth_password_hash_wait_seconds_count").map { $0 >= 3 } == true, "account, sign-in, wrong password")
                #expect(after.value("bioauth_password_hash_queue_depth") == 0)
                let units = #"bioauth_database_unit_of_work_seconds_count{engine="\#(backend.rawValue)",outcome="committed"}"#
                #expect(after.value(units).map { $0 > (before.value(units) ?? 0) } == true, "\(after.text)")
                #expect(after.value("bioauth_http_requests_in_flight") == 0)
                #expect(after.value("bioauth_http_connections_open").map { $0 >= 1 } == true, "the test client's connection is open")

                // Every label value comes from a fixed set: nothing of the user's is ever a label.
                let text = try await Self.scrape(port).text
                for secret in ["metrics-alice", tokens.access, tokens.refresh, accountID, key.keyID] {
                    #expect(!text.contains(secret), "a metric label holds a user's value")
                }
            }
        )
    }

    @Test("rate-limit refusals and payment authorizations are counted by kind and outcome")
    func refusalsAndPayments() async throws {
        try await TestServer.run(
            .live,
            configure: {
                $0.metricsPort = 0
                $0.signInChallengesPerWindow = 1
            },
            { api in
                let port = try #require(await api.metricsPorts.first { _ in true })
                let key = TestKey()
                let (tokens, _) = try await api.enrolled(key)
                _ = try await api.signInChallenge(key)
                #expect(try await api.signInChallenge(key).code == "rate_limited")
                _ = try await api.setPIN("258046", token: tokens.access)
                let payment = try #require(try await api.createPayment(token: tokens.access)["paymentId"])
                let wrongPIN = try await api.call(.post, "/v1/payments/\(payment)/pin-authorization", json: ["pin": "111112"], token: tokens.access)
                #expect(wrongPIN.code == "wrong_pin")
                let right = try await api.call(.post, "/v1/payments/\(payment)/pin-authorization", json: ["pin": "258046"], token: tokens.access)
                #expect(right.status == 200)

                let metrics = try await Self.scrape(port)
                #expect(metrics.value(#"bioauth_rate_limit_refusals_total{limit="signin_key"}"#) == 1, "\(metrics.text)")
                #expect(metrics.value(#"bioauth_problems_total{code="rate_limited"}"#) == 1)
                #expect(metrics.value(#"bioauth_payment_authorizations_total{method="pin",outcome="wrong_pin"}"#) == 1)
                #expect(metrics.value(#"bioauth_payment_authorizations_total{method="pin",outcome="success"}"#) == 1)
            }
        )
    }

    @Test("a metrics port equal to the API's port, or out of range, stops start-up with a message naming it")
    func badMetricsPort() {
        var configuration = ServerConfiguration()
        configuration.metricsPort = configuration.port
        let same = #expect(throws: ConfigurationError.self) { try configuration.validate() }
        #expect(same?.message == "metrics port must differ from the port")
        configuration.metricsPort = 70000
        let range = #expect(throws: ConfigurationError.self) { try configuration.validate() }
        #expect(range?.message == "metrics port must be 0-65535")
    }

    @Test("a sample is read by its exact name and labels, a timestamp after it ignored, and a missing or garbled one is nil")
    func sampleReading() {
        let text = """
            # TYPE bioauth_x_total counter
            bioauth_x_total{engine="sqlite"} 7
            bioauth_x_total{engine="postgres"} 12 1700000000000
            bioauth_x_total_more{engine="postgres"} 99
            bioauth_y_total garbled

            """
        #expect(ServerMetrics.sample(#"bioauth_x_total{engine="postgres"}"#, inExposition: text) == 12)
        #expect(ServerMetrics.sample(#"bioauth_x_total{engine="sqlite"}"#, inExposition: text) == 7)
        // The bare name matches neither its labelled samples nor the longer name it begins; an absent series is nil.
        #expect(ServerMetrics.sample("bioauth_x_total", inExposition: text) == nil)
        #expect(ServerMetrics.sample(#"bioauth_x_total_more{engine="sqlite"}"#, inExposition: text) == nil)
        #expect(ServerMetrics.sample("bioauth_y_total", inExposition: text) == nil)
        #expect(ServerMetrics.sample("bioauth_z_total", inExposition: "") == nil)
    }

    // MARK: Scraping

    struct Scrape {
        let status: Int
        let contentType: String?
        let text: String

        /// The sample named exactly `series` (name and labels as exposed), if present.
        func value(_ series: String) -> Double? { ServerMetrics.sample(series, inExposition: text) }
    }

    /// `GET /metrics` over a real socket.
    static func scrape(_ port: Int) async throws -> Scrape {
        let bytes = try await RawHTTPConnection.offPool {
            try RawHTTPConnection.exchange(port: port, Array("GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".utf8))
        }
        let response = try #require(RawHTTPConnection.parse(bytes))
        let contentType = response.headers.split(separator: "\r\n")
            .first { $0.lowercased().hasPrefix("content-type:") }
            .map { $0.dropFirst("content-type:".count).trimmingCharacters(in: .whitespaces) }
        return Scrape(status: response.status, contentType: contentType, text: response.body)
    }
}

/// A unit of work's retries reach the metrics through ``UnitOfWorkEvents`` (the PostgreSQL executor reports each one).
@Suite("Metrics: database units of work")
struct UnitOfWorkMetricsTests {
    /// An executor that reports `retries` retries, then runs the unit on `base`.
    struct Retrying: DatabaseExecutor {
        let base: any DatabaseExecutor
        let retries: Int
        var dialect: DatabaseDialect { .postgres }
        func transaction<R: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
            for _ in 0..<retries { UnitOfWorkEvents.current?.retried() }
            return try await base.transaction(body)
        }
        func close() async throws { try await base.close() }
    }

    @Test("every metric with # HELP text is in docs/OPERATIONS.md's tables, and a HELP line is added only before its own TYPE")
    func helpDocumented() throws {
        let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/OPERATIONS.md")
        let text = try String(contentsOf: docs, encoding: .utf8)
        for name in ServerMetrics.help.keys { #expect(text.contains("| `\(name)` |"), "\(name) is documented") }
        let sample = Array(
            "# TYPE bioauth_payments_expired_total counter\nbioauth_payments_expired_total 0\n# TYPE x_unknown gauge\nx_unknown 1\n".utf8
        )
        #expect(
            String(decoding: ServerMetrics.withHelp(sample), as: UTF8.self)
                == "# HELP bioauth_payments_expired_total Pending payments the expiry sweep marked expired.\n# TYPE bioauth_payments_expired_total counter\nbioauth_payments_expired_total 0\n# TYPE x_unknown gauge\nx_unknown 1\n"
        )
    }

    @Test("retries are counted, and each unit is timed by engine and outcome")
    func retriesCounted() async throws {
        let base = try await openDatabase(":memory:", logger: Logger(label: "test"))
        let metrics = ServerMetrics.prometheus()
        let measured = MeasuredDatabaseExecutor(base: Retrying(base: base, retries: 2), metrics: metrics)
        _ = try await measured.transaction { db in try await db.raw("SELECT 1 AS one").first() }
        await #expect(throws: (any Error).self) { try await measured.transaction { db in try await db.raw("SELECT nope").run() } }
        try await base.close()
        let text = String(decoding: try #require(metrics.exposition()), as: UTF8.self)
        let scrape = MetricsTests.Scrape(status: 200, contentType: nil, text: text)
        #expect(scrape.value(#"bioauth_database_retries_total{engine="postgres"}"#) == 4, "\(text)")
        #expect(scrape.value(#"bioauth_database_unit_of_work_seconds_count{engine="postgres",outcome="committed"}"#) == 1)
        #expect(scrape.value(#"bioauth_database_unit_of_work_seconds_count{engine="postgres",outcome="failed"}"#) == 1)
    }

    @Test(
        "every statement sent to PostgreSQL is counted, BEGIN, COMMIT and ROLLBACK included, in every kind of unit of work",
        arguments: StorageBackend.available
    )
    func statementsCounted(backend: StorageBackend) async throws {
        let metrics = ServerMetrics.prometheus()
        try await TestDatabase.withOpened(backend) { base in
            let measured = MeasuredDatabaseExecutor(base: base, metrics: metrics)
            // BEGIN, two statements, COMMIT: 4.
            _ = try await measured.transaction { db in
                _ = try await db.raw("SELECT 1 AS one").first()
                return try await db.raw("SELECT 2 AS two").first()
            }
            // At READ COMMITTED, another prepared BEGIN: 3.
            _ = try await measured.transaction(isolation: .readCommitted) { db in try await db.raw("SELECT 1 AS one").first() }
            // Each statement on its own, no BEGIN or COMMIT: 2.
            _ = try await measured.standalone { db in
                _ = try await db.raw("SELECT 1 AS one").first()
                return try await db.raw("SELECT 2 AS two").first()
            }
            // BEGIN, the failing statement, ROLLBACK: 3.
            await #expect(throws: (any Error).self) { try await measured.transaction { db in try await db.raw("SELECT nope").run() } }
            // The background executor's connections count too: BEGIN, one statement, COMMIT: 3.
            _ = try await measured.background.transaction { db in try await db.raw("SELECT 1 AS one").first() }
        }
        let text = String(decoding: try #require(metrics.exposition()), as: UTF8.self)
        let scrape = MetricsTests.Scrape(status: 200, contentType: nil, text: text)
        // SQLite's executor reports none: a round trip is PostgreSQL's.
        #expect(scrape.value(#"bioauth_database_statements_total{engine="postgres"}"#) == (backend == .postgres ? 15 : 0), "\(text)")
    }
}
