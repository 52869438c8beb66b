import BioAuthCore
import CoreMetrics
import Foundation
import NIOConcurrencyHelpers
import Prometheus

/// What the server counts and times, recorded through swift-metrics.
///
/// ``prometheus()`` keeps the metrics in a registry of their own, which `bioauth serve --metrics-port` exports in
/// Prometheus's text format (``exposition()``); ``init(factory:)`` sends them to another swift-metrics backend (an
/// embedding app's `MetricsSystem.factory`, say). Every label takes its values from a fixed set (route templates,
/// methods, status codes, problem codes, sign-in methods): never a username, token, account id or other unbounded
/// value, so the number of time series stays bounded whatever the traffic. docs/OPERATIONS.md lists every metric.
public final class ServerMetrics: Sendable {
    let factory: any MetricsFactory
    private let registry: PrometheusCollectorRegistry?

    /// Metrics kept in their own Prometheus registry, exported by ``exposition()``.
    public static func prometheus() -> ServerMetrics {
        let registry = PrometheusCollectorRegistry()
        return ServerMetrics(factory: PrometheusMetricsFactory(registry: registry), registry: registry)
    }

    /// Metrics sent to `factory`; ``exposition()`` is then nil (the backend exports them itself).
    public convenience init(factory: any MetricsFactory) {
        self.init(factory: factory, registry: nil)
    }

    private init(factory: any MetricsFactory, registry: PrometheusCollectorRegistry?) {
        self.factory = factory
        self.registry = registry
        inFlight = Meter(label: "bioauth_http_requests_in_flight", factory: factory)
        connections = Meter(label: "bioauth_http_connections_open", factory: factory)
        hashQueueDepth = Meter(label: "bioauth_password_hash_queue_depth", factory: factory)
        hashWait = CoreMetrics.Timer(label: "bioauth_password_hash_wait_seconds", factory: factory)
        // The standard names Prometheus's client libraries give these, so that dashboards and alerts written for any
        // process work here too.
        residentMemory = Meter(label: "process_resident_memory_bytes", factory: factory)
        openFiles = Meter(label: "process_open_fds", factory: factory)
        cpuTime = FloatingPointCounter(label: "process_cpu_seconds_total", factory: factory)
        startTime = Meter(label: "process_start_time_seconds", factory: factory)
        postgresStatements = Counter(
            label: "bioauth_database_statements_total",
            dimensions: [("engine", DatabaseDialect.postgres.rawValue)],
            factory: factory
        )
        if let started = ProcessStats.startTime() { startTime.set(started.timeIntervalSince1970) }
        registerKnownSeries()
    }

    /// Every series whose labels take known values is made at start, at zero, so that a rate or an alert works before
    /// the first event (a retention alert, say, before the first purge an hour after start).
    private func registerKnownSeries() {
        for method in SignInMethod.allCases {
            _ = Counter(label: "bioauth_sign_ins_total", dimensions: [("method", method.rawValue), ("outcome", "success")], factory: factory)
        }
        for method in PaymentMethod.allCases {
            _ = Counter(
                label: "bioauth_payment_authorizations_total",
                dimensions: [("method", method.rawValue), ("outcome", "success")],
                factory: factory
            )
        }
        for purpose in [SignedPayload.Purpose.login, .register, .payment, .paymentPIN] {
            _ = Counter(label: "bioauth_challenges_issued_total", dimensions: [("purpose", purpose.rawValue)], factory: factory)
        }
        for limit in RateLimit.allCases {
            _ = Counter(label: "bioauth_rate_limit_refusals_total", dimensions: [("limit", limit.rawValue)], factory: factory)
        }
        for engine in [DatabaseDialect.sqlite, .postgres] {
            _ = Counter(label: "bioauth_database_retries_total", dimensions: [("engine", engine.rawValue)], factory: factory)
        }
        for kind in Retention.Kind.allCases {
            _ = Counter(label: "bioauth_retention_deleted_total", dimensions: [("kind", kind.rawValue)], factory: factory)
        }
        for outcome in ["completed", "skipped", "failed"] {
            _ = Counter(label: "bioauth_retention_runs_total", dimensions: [("outcome", outcome)], factory: factory)
        }
        // The outbox's backlog, 0 until the dispatcher's first sweep.
        Meter(label: "bioauth_webhook_deliveries_due", factory: factory).set(0)
        Meter(label: "bioauth_webhook_oldest_due_seconds", factory: factory).set(0)
        // 0 until a purge completes: "no purge for a day" is then true of a server up for a day without one.
        Meter(label: "bioauth_retention_last_completed_timestamp_seconds", factory: factory).set(0)
        for outcome in ["delivered", "retry", "failed"] {
            _ = Counter(label: "bioauth_webhook_attempts_total", dimensions: [("outcome", outcome)], factory: factory)
        }
        for reason in AttemptFailure.kinds {
            _ = Counter(label: "bioauth_webhook_attempt_failures_total", dimensions: [("reason", reason)], factory: factory)
        }
        _ = CoreMetrics.Timer(label: "bioauth_webhook_attempt_duration_seconds", factory: factory)
        _ = Counter(label: "bioauth_payments_expired_total", factory: factory)
    }

    /// The metrics in Prometheus's text exposition format (version 0.0.4), with the process's memory and open files
    /// read now; nil for metrics sent to another backend.
    public func exposition() -> [UInt8]? {
        guard let registry else { return nil }
        if let bytes = ProcessStats.residentBytes() { residentMemory.set(bytes) }
        if let files = ProcessStats.openFileDescriptors() { openFiles.set(files) }
        if let seconds = ProcessStats.cpuSeconds() {
            // A counter only grows: it is moved by what was used since the last scrape.
            let used = cpuSeconds.withLockedValue { last in
                defer { last = max(last, seconds) }
                return max(0, seconds - last)
            }
            if used > 0 { cpuTime.increment(by: used) }
        }
        return Self.withHelp(registry.emitToBuffer())
    }

    /// The value of the sample named exactly `series` in a Prometheus text exposition: the metric's name with its labels
    /// as exposed, e.g. `bioauth_database_statements_total{engine="postgres"}`; nil when no line carries it or its value
    /// is not a number. A timestamp after the value is allowed and ignored. What `bioauth bench` and the tests read from a
    /// scrape.
    public static func sample(_ series: String, inExposition text: String) -> Double? {
        let prefix = series + " "
        for line in text.split(separator: "\n") where line.hasPrefix(prefix) {
            let value = line.dropFirst(prefix.count).prefix { $0 != " " }
            return Double(value)
        }
        return nil
    }

    /// What each metric means, exported as its `# HELP` line (swift-metrics, through which the server records, has no
    /// place for it; docs/OPERATIONS.md says the same at more length).
    static let help: [String: String] = [
        "bioauth_http_requests_total": "Requests answered, by method, route template and status.",
        "bioauth_http_request_duration_seconds": "Time from a request's head to its response, body read included.",
        "bioauth_http_requests_in_flight": "Requests being served now.",
        "bioauth_http_connections_open": "Open connections to the API listener.",
        "bioauth_problems_total": "Problem documents answered, by problem code.",
        "bioauth_sign_ins_total": "Sign-in attempts, by method and outcome (success or the problem code).",
        "bioauth_payment_authorizations_total": "Payment authorization attempts, by method and outcome.",
        "bioauth_challenges_issued_total": "Challenges issued, by purpose.",
        "bioauth_rate_limit_refusals_total": "Requests refused by a rate limit, by limit.",
        "bioauth_password_hash_queue_depth": "bcrypt jobs waiting for a hashing thread.",
        "bioauth_password_hash_wait_seconds": "How long a bcrypt job waited for a thread.",
        "bioauth_database_unit_of_work_seconds": "Units of work (transactions), retries and waits included, by engine and outcome.",
        "bioauth_database_retries_total": "Units of work rolled back by a serialization failure or deadlock and run again.",
        "bioauth_database_statements_total": "Statements sent to PostgreSQL, BEGIN and COMMIT included: one round trip each.",
        "bioauth_retention_deleted_total": "Rows the retention purge deleted, by kind.",
        "bioauth_retention_runs_total": "Retention purges, by outcome.",
        "bioauth_retention_last_completed_timestamp_seconds": "When this instance last completed a purge (0: never since start).",
        "bioauth_webhook_attempts_total": "Webhook delivery attempts, by outcome (delivered, retry, failed: given up).",
        "bioauth_webhook_attempt_failures_total": "Failed webhook attempts, by reason (the detail the endpoint's owner is not shown).",
        "bioauth_webhook_attempt_duration_seconds": "How long a webhook receiver took to answer, or to fail.",
        "bioauth_payments_expired_total": "Pending payments the expiry sweep marked expired.",
        "bioauth_webhook_deliveries_due": "Webhook deliveries due and not yet being sent, at the last sweep (counted up to 10000).",
        "bioauth_webhook_oldest_due_seconds": "How long the oldest webhook delivery due and not yet being sent had waited, at the last sweep.",
        "process_resident_memory_bytes": "Resident memory size in bytes.",
        "process_open_fds": "Number of open file descriptors.",
        "process_cpu_seconds_total": "Total user and system CPU time spent in seconds.",
        "process_start_time_seconds": "Start time of the process since unix epoch in seconds.",
    ]

    /// `exposition` with a `# HELP` line before each metric's `# TYPE` line, for the metrics ``help`` describes.
    static func withHelp(_ exposition: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(exposition.count + 4096)
        for line in exposition.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            if line.starts(with: "# TYPE ".utf8) {
                let name = String(decoding: line.dropFirst(7).prefix { $0 != UInt8(ascii: " ") }, as: UTF8.self)
                if let text = help[name] { out.append(contentsOf: "# HELP \(name) \(text)\n".utf8) }
            }
            out.append(contentsOf: line)
            out.append(UInt8(ascii: "\n"))
        }
        // The split gave an empty last piece after the final newline; the loop added one newline too many.
        if exposition.last == UInt8(ascii: "\n") || exposition.isEmpty { out.removeLast() }
        return out
    }

    // MARK: HTTP

    private let inFlight: Meter
    private let connections: Meter

    /// One request answered: counted by method (`other` for a non-standard one), route template and status, timed by
    /// method and route template.
    /// `route` is the template the router matched (`/v1/payments/{paymentId}`), or `unmatched`.
    func request(method rawMethod: String, route: String, status: Int, duration: Duration) {
        // A client may send any token as a method: only the standard ones are labels, so that made-up methods cannot
        // grow the number of series.
        let method = Self.methods.contains(rawMethod) ? rawMethod : "other"
        Counter(
            label: "bioauth_http_requests_total",
            dimensions: [("method", method), ("route", route), ("status", String(status))],
            factory: factory
        )
        .increment()
        CoreMetrics.Timer(label: "bioauth_http_request_duration_seconds", dimensions: [("method", method), ("route", route)], factory: factory)
            .recordNanoseconds(duration.nanoseconds)
    }

    private static let methods: Set<String> = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"]

    /// A request started (`+1`) or finished (`-1`).
    func requestsInFlight(_ change: Int) { change > 0 ? inFlight.increment(by: Double(change)) : inFlight.decrement(by: Double(-change)) }

    /// A connection opened (`+1`) or closed (`-1`).
    func connectionsOpen(_ change: Int) { change > 0 ? connections.increment(by: Double(change)) : connections.decrement(by: Double(-change)) }

    /// A problem document answered, by its code.
    func problem(_ code: ProblemCode) {
        Counter(label: "bioauth_problems_total", dimensions: [("code", code.rawValue)], factory: factory).increment()
    }

    // MARK: Sign-ins, payments, challenges

    /// How a sign-in was attempted.
    enum SignInMethod: String, CaseIterable { case password, biometric, passkey, refresh }

    /// A sign-in attempt's outcome: `success`, or the problem code it was refused with.
    func signIn(_ method: SignInMethod, outcome: String) {
        Counter(label: "bioauth_sign_ins_total", dimensions: [("method", method.rawValue), ("outcome", outcome)], factory: factory).increment()
    }

    /// How a payment authorization was attempted.
    enum PaymentMethod: String, CaseIterable { case biometric, pin }

    /// A payment authorization's outcome: `success`, or the problem code it was refused with.
    func paymentAuthorization(_ method: PaymentMethod, outcome: String) {
        Counter(label: "bioauth_payment_authorizations_total", dimensions: [("method", method.rawValue), ("outcome", outcome)], factory: factory)
            .increment()
    }

    /// A challenge issued, by purpose (`login`, `register`, `payment`, `pin`).
    func challengeIssued(_ purpose: String) {
        Counter(label: "bioauth_challenges_issued_total", dimensions: [("purpose", purpose)], factory: factory).increment()
    }

    /// The rate limits, as the refusals metric names them (a fixed name per kind of limit, never the bucket).
    enum RateLimit: String, CaseIterable, Sendable {
        case signinKey = "signin_key"
        case signinClient = "signin_client"
        case oauthToken = "oauth_token"
        case passkeyClient = "passkey_client"
        case consoleSignIn = "console_sign_in"
        case approvalClient = "approval_client"
        case approvalAccount = "approval_account"
        case bindingCodeAccount = "binding_code_account"
        case bindingCodeAddress = "binding_code_address"
    }

    /// A request refused by a rate limit, by limit.
    func rateLimited(_ limit: RateLimit) {
        Counter(label: "bioauth_rate_limit_refusals_total", dimensions: [("limit", limit.rawValue)], factory: factory).increment()
    }

    // MARK: Password hashing

    private let hashQueueDepth: Meter
    private let hashWait: CoreMetrics.Timer

    /// A password hash or check was queued for the hashing threads.
    func passwordHashQueued() { hashQueueDepth.increment() }

    /// A queued hash or check started on a hashing thread after waiting `waited`.
    func passwordHashStarted(waited: Duration) {
        hashQueueDepth.decrement()
        hashWait.recordNanoseconds(waited.nanoseconds)
    }

    // MARK: Database

    /// A unit of work finished (`committed` or `failed`) after `duration`, retries included.
    func unitOfWork(engine: DatabaseDialect, outcome: String, duration: Duration) {
        CoreMetrics.Timer(
            label: "bioauth_database_unit_of_work_seconds",
            dimensions: [("engine", engine.rawValue), ("outcome", outcome)],
            factory: factory
        )
        .recordNanoseconds(duration.nanoseconds)
    }

    /// A unit of work was rolled back by a serialization failure or deadlock and runs again (PostgreSQL).
    func unitOfWorkRetried(engine: DatabaseDialect) {
        Counter(label: "bioauth_database_retries_total", dimensions: [("engine", engine.rawValue)], factory: factory).increment()
    }

    /// A statement was sent to the database (PostgreSQL's executor reports each one, `BEGIN` and `COMMIT` included: one
    /// round trip each).
    func statementSent(engine: DatabaseDialect) {
        guard engine == .postgres else {
            return Counter(label: "bioauth_database_statements_total", dimensions: [("engine", engine.rawValue)], factory: factory).increment()
        }
        // On every statement PostgreSQL runs: its series is kept, not looked up in the registry each time.
        postgresStatements.increment()
    }

    /// `bioauth_database_statements_total{engine="postgres"}`.
    private let postgresStatements: CoreMetrics.Counter

    // MARK: Retention

    /// Rows a purge deleted, by kind (`challenges`, `access_tokens`, …).
    func retentionDeleted(_ kind: String, count: Int) {
        guard count > 0 else { return }
        Counter(label: "bioauth_retention_deleted_total", dimensions: [("kind", kind)], factory: factory).increment(by: count)
    }

    /// A purge ended: `completed` (then also the time, for alerting on a job that stopped running), `skipped` (another
    /// instance held the lease) or `failed`.
    func retentionRun(outcome: String, at time: Date? = nil) {
        Counter(label: "bioauth_retention_runs_total", dimensions: [("outcome", outcome)], factory: factory).increment()
        if let time { Meter(label: "bioauth_retention_last_completed_timestamp_seconds", factory: factory).set(time.timeIntervalSince1970) }
    }

    // MARK: Webhooks and expiry

    /// One webhook delivery attempt: `delivered`, `retry` (failed, tried again later) or `failed` (given up); why it
    /// failed (``AttemptFailure/kind``); its time.
    func webhookAttempt(outcome: String, error: String?, duration: Duration) {
        Counter(label: "bioauth_webhook_attempts_total", dimensions: [("outcome", outcome)], factory: factory).increment()
        if let error { Counter(label: "bioauth_webhook_attempt_failures_total", dimensions: [("reason", error)], factory: factory).increment() }
        CoreMetrics.Timer(label: "bioauth_webhook_attempt_duration_seconds", factory: factory).recordNanoseconds(duration.nanoseconds)
    }

    /// The webhook outbox's backlog at the last sweep: deliveries due and not yet claimed (at most
    /// ``WebhookDispatcher/backlogCap``), and how long the oldest of them has been due (0 when none is).
    func webhookBacklog(due: Int, oldestWaiting: TimeInterval) {
        Meter(label: "bioauth_webhook_deliveries_due", factory: factory).set(due)
        Meter(label: "bioauth_webhook_oldest_due_seconds", factory: factory).set(max(0, oldestWaiting))
    }

    /// Pending payments the expiry sweep marked expired.
    func paymentsExpired(_ count: Int) {
        guard count > 0 else { return }
        Counter(label: "bioauth_payments_expired_total", factory: factory).increment(by: count)
    }

    // MARK: Process

    private let residentMemory: Meter
    private let openFiles: Meter
    private let cpuTime: FloatingPointCounter
    private let startTime: Meter
    /// The process's CPU seconds at the last scrape.
    private let cpuSeconds = NIOLockedValueBox<Double>(0)
}

extension Duration {
    /// The duration in whole nanoseconds (saturating).
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? .max : scaled.addingReportingOverflow(attoseconds / 1_000_000_000).partialValue
    }
}
