import AsyncHTTPClient
import BioAuthClient
import BioAuthCore
import BioAuthServer
import Crypto
import Foundation
import Histogram
import Logging
import OpenAPIAsyncHTTPClient

/// One operation a mix measures, by the name the report and `bench-result.json` give it. The password workers, which run
/// beside any mix, report theirs as `password_sign_in`.
enum BenchOperation: String, Sendable {
    /// Challenge, then the signed login payload: a new session.
    case signIn = "biometric_sign_in"
    /// Create, challenge, authorize.
    case payment
    /// Two readiness checks.
    case baseline
    /// A sign-in challenge alone.
    case challenge = "sign_in_challenge"
}

/// What `bioauth bench` measures and how.
struct BenchOptions: Sendable {
    enum Mix: String, Sendable, CaseIterable {
        case signIn = "signin"
        case payment
        case both
        /// Two `GET /readyz` (each a database round trip) per operation: as many HTTP exchanges as a sign-in, through the same client, server and
        /// database thread, with none of a sign-in's work. What the stack alone costs: the floor under a sign-in.
        case baseline
        /// One sign-in challenge per operation (`POST /v1/sessions/biometric/challenges` for an enrolled key, nothing signed, the challenge
        /// left to expire): the first of a sign-in's two requests alone. What the one endpoint a caller needs no session for
        /// costs under a flood, and what a sign-in would save without it.
        case challenge

        /// The mixes as `--mix` takes them, for help and messages.
        static var names: String { allCases.map(\.rawValue).joined(separator: ", ") }

        /// What a worker's `turn`-th operation is: `both` alternates sign-ins and payments.
        func operation(turn: Int) -> BenchOperation {
            switch self {
            case .signIn: .signIn
            case .payment: .payment
            case .both: turn % 2 == 1 ? .payment : .signIn
            case .baseline: .baseline
            case .challenge: .challenge
            }
        }
    }

    var devices = 64
    var concurrency = 64
    /// Operations started per second, open loop (`nil`: closed loop, each worker starting its next operation when
    /// its last one ends). Latency is then measured from each operation's intended start, so a server that falls
    /// behind shows its queueing in the latency instead of slowing the load down (coordinated omission).
    var rate: Double?
    var duration: TimeInterval = 10
    /// Closed loop only: measure exactly this many operations after the warm-up, however long they take, instead of a
    /// ``duration`` (which it replaces). The measured time is then the time they took. What the tests use, so that a
    /// loaded machine makes a run slower, never empty.
    var operations: Int?
    var warmup: TimeInterval = 2
    var mix: Mix = .both
    /// Concurrent password sign-in workers running beside the biometric ones (0: none).
    var passwordWorkers = 0
    var server: URL?
    /// Run the server as a separate `bioauth serve` process instead of in this one.
    var serverProcess = false
    /// The `bioauth` executable for ``serverProcess`` (default: this process's own).
    var serverExecutable: URL?
    /// With ``serverProcess``: how many `bioauth serve` processes share the one database (PostgreSQL when more than one).
    /// Devices enrol through the first; worker `i` drives instance `i % instances`.
    var instances = 1
    /// With ``serverProcess``: the share of the time each server process may run (``CPUCap``) from the warm-up to the
    /// end, so that on a machine with few cores the instances, not the database, limit throughput. `nil`: no cap.
    var serverCPUShare: Double?
    /// The started server's database (`nil`: a temporary SQLite file).
    var database: String?
    /// ``database`` when it is a `postgres://` URL.
    var postgresURL: String? { database.flatMap { DatabaseDialect(location: $0) == .postgres ? $0 : nil } }
    /// The started server's seconds between retention purges (`nil`: the default, hourly), so that a run can measure
    /// requests served while the server purges a loaded database's backlog.
    var retentionInterval: TimeInterval?
    /// The started server's rows per purge batch and rest after each (`nil`: the server's defaults), to measure what
    /// other settings do to the requests served during a purge.
    var retentionBatchSize: Int?
    var retentionBatchRest: Double?
    /// Subscribe a webhook endpoint (a receiver in this process) to the payment and device events.
    var webhooks = false
    /// Also report each operation window by window, windows of this many seconds (``LatencySeries``); `nil`: the whole
    /// measured phase only.
    var seriesSeconds: TimeInterval?
    /// The started server's PostgreSQL pool size.
    var databaseConnections = ServerConfiguration().databaseConnections
    var bcryptCost = 12
    var progress = true
}
