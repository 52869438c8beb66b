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

/// One operation's results.
struct OperationResult: Sendable {
    /// Latencies in µs, up to ``highestMicros``; a longer one is recorded as that (an open-loop run far past capacity
    /// queues its last operations that long), never dropped, so every operation is counted.
    var histogram = Histogram<UInt64>(highestTrackableValue: highestMicros, numberOfSignificantValueDigits: .three)
    /// One hour.
    static let highestMicros: UInt64 = 3_600_000_000
    var errors: [String: Int] = [:]
    /// With ``BenchOptions/seriesSeconds``: the same operations window by window.
    var series: LatencySeries?

    /// Counts a success that took `micros`: longer than ``highestMicros`` is counted as that.
    mutating func recordSuccess(micros: UInt64) { _ = histogram.record(min(micros, Self.highestMicros)) }

    init(seriesSeconds: Double? = nil) {
        series = seriesSeconds.map(LatencySeries.init(seconds:))
    }

    mutating func merge(_ other: OperationResult) {
        histogram.add(other.histogram)
        errors.merge(other.errors, uniquingKeysWith: +)
        if let other = other.series {
            if series == nil { series = LatencySeries(seconds: other.seconds) }
            series?.merge(other)
        }
    }
}

/// Everything one run measured.
struct BenchResult: Sendable {
    var options: BenchOptions
    var measuredSeconds: Double
    var operations: [String: OperationResult]
    var rawVerifyPerSecond: Double
    /// Of the server processes together with ``BenchOptions/serverProcess``, else of this process (server and load
    /// generator).
    var peakResidentBytes: Int?
    var enrollmentSeconds: Double
    var cores: Int
    /// CPU seconds the server processes used together in the measured phase (only with ``BenchOptions/serverProcess``).
    var serverCPUSeconds: Double?
    /// CPU seconds this process used in the measured phase: the load generator, and the server when it runs here.
    var benchCPUSeconds: Double?
    /// CPU seconds the server's database thread (SQLite's, ``SQLiteDatabaseExecutor/threadName``) used in the measured
    /// phase; `nil` for an external server or PostgreSQL.
    var databaseThreadCPUSeconds: Double?
    /// On PostgreSQL (`--database postgres://…`): what the database did in the measured phase.
    var postgres: PostgresUse?
    /// With ``BenchOptions/webhooks``: what the bank's receiver got (``WebhookUse``).
    var webhooks: WebhookUse? = nil

    /// Where the server ran.
    var serverPlacement: ServerPlacement {
        options.server != nil ? .external : options.serverProcess ? .childProcess : .inProcess
    }

    enum ServerPlacement: String, Sendable {
        case inProcess = "in_process"
        case childProcess = "child_process"
        case external
    }
}

/// CPU and memory measured during the measured phase.
struct MeasuredUse: Sendable {
    var peakResidentBytes: Int?
    var serverCPUSeconds: Double?
    var benchCPUSeconds: Double?
    var databaseThreadCPUSeconds: Double?
    var postgres: PostgresUse?
    /// Webhook deliveries the bench's receiver got in the measured phase (``BenchOptions/webhooks``).
    var webhookDeliveries: Int? = nil
}

/// The webhook deliveries the bench's receiver got (``BenchOptions/webhooks``), retries included.
struct WebhookUse: Sendable {
    /// Deliveries received in the measured phase.
    var measured: Int
    /// Deliveries from the warm-up to the end whose signature did not verify with the subscription's secret: none,
    /// unless something is wrong (then `--fail-on-server-errors` fails the run: ``BenchResult/serverFailure``).
    var unverified: Int
}

/// What PostgreSQL did in the measured phase: its transactions and statements (``PostgresActivity``), the statements the
/// servers sent, and the CPU time of the `postgres` processes when the database runs on this machine.
struct PostgresUse: Sendable {
    var activity: PostgresActivity
    /// CPU seconds of every `postgres` process on this machine; `nil` when none runs here.
    var cpuSeconds: Double?
    /// Statements the servers the bench started sent, `BEGIN` and `COMMIT` included (each one round trip), by their
    /// own count (`bioauth_database_statements_total`); `nil` when any did not say (an older binary).
    var statementsSent: Int64? = nil
}

/// Drives a BioAuth server with simulated devices whose keys are in software: biometric sign-ins
/// (challenge → sign → verify → session) and payment authorizations (create → challenge → sign → authorize).
struct BenchRunner {
    let options: BenchOptions
    let log: @Sendable (String) -> Void

    /// A device as the bench drives it.
    final class Device: @unchecked Sendable {
        let key = P256.Signing.PrivateKey()
        let keyID: Data
        var accessToken: String
        var counter: UInt64 = 0
        init(accessToken: String) {
            keyID = DevicePublicKey(key.publicKey).keyID
            self.accessToken = accessToken
        }
    }

    func run() async throws -> BenchResult {
        var clientConfiguration = HTTPClient.Configuration(
            connectionPool: .init(
                idleTimeout: .seconds(60),
                concurrentHTTP1ConnectionsPerHostSoftLimit: options.concurrency + options.passwordWorkers + 4
            )
        )
        // The load generator traces nothing; without this the client builds span attributes for every request
        // (about 4 % of its CPU in the profile) for a tracer that drops them.
        clientConfiguration.tracing.tracer = nil
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)
        let cores = ProcessInfo.processInfo.activeProcessorCount
        var server: LoopbackServer?
        var children: [ServerProcess] = []
        var directory: URL?
        var receiver: LoopbackWebhookReceiver?
        // The bank's backend as a service client, with --webhooks.
        var bank: ServiceClients.Credentials?
        func stopServers() async {
            await server?.stop()
            for child in children { await child.stop() }
            await receiver?.stop()
            if let directory { try? FileManager.default.removeItem(at: directory) }
        }
        do {
            var urls: [URL] = []
            // On PostgreSQL, each server the bench starts serves its metrics here, for the statements it sends.
            let postgres = options.postgresURL != nil
            var metrics: [URL] = []
            /// A free loopback port for one more server's metrics listener, whose address joins `metrics`.
            func metricsListener() async throws -> Int {
                let port = try await ServerProcess.freeLoopbackPort()
                metrics.append(URL(string: "http://127.0.0.1:\(port)/metrics")!)
                return port
            }
            if let external = options.server {
                urls = [external]
            } else {
                let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bioauth-bench-\(UUID().uuidString)")
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                directory = folder
                var configuration = ServerConfiguration()
                configuration.databasePath = options.database ?? folder.appendingPathComponent("bench.sqlite").path
                configuration.databaseConnections = options.databaseConnections
                configuration.receiptKeyPath = folder.appendingPathComponent("receipt-key.pem").path
                configuration.pinKeyPath = folder.appendingPathComponent("pin-key").path
                configuration.bcryptCost = options.bcryptCost
                configuration.relyingPartyID = "bench.bioauth.local"
                // The bench signs in far more often than a person, all from one address.
                configuration.signInChallengesPerWindow = 1_000_000
                configuration.signInChallengesPerClient = 1_000_000
                configuration.logLevel = .error
                if let interval = options.retentionInterval { configuration.retention.interval = interval }
                if let size = options.retentionBatchSize { configuration.retention.batchSize = size }
                if let rest = options.retentionBatchRest { configuration.retention.batchRest = rest }
                if options.webhooks {
                    receiver = try await LoopbackWebhookReceiver.start()
                    // The bank's receiver listens on this machine: a destination the server refuses unless it is allowed.
                    configuration.outbound.allowed = ["127.0.0.1"]
                }
                bank = try await Self.prepare(configuration.databasePath, webhooks: options.webhooks)
                if options.serverProcess {
                    // One after another: the first brings the schema up to date, the others find it so.
                    for instance in 1...max(1, options.instances) {
                        var settings = ServeCommand.environment(for: configuration)
                        if postgres { settings["BIOAUTH_METRICS_PORT"] = String(try await metricsListener()) }
                        children.append(
                            try await ServerProcess.start(
                                executable: try options.serverExecutable ?? Self.ownExecutable(),
                                settings: settings,
                                folder: folder,
                                http: http,
                                logName: options.instances > 1 ? "server-\(instance).log" : "server.log"
                            )
                        )
                    }
                    urls = children.map(\.url)
                } else {
                    var logger = Logger(label: "bioauth-bench")
                    logger.logLevel = configuration.logLevel
                    if postgres { configuration.metricsPort = try await metricsListener() }
                    server = try await LoopbackServer.start(configuration: configuration, logger: logger)
                    urls = [server!.url]
                }
            }
            let servers = urls
            let url = servers[0]
            if let receiver, let credentials = bank {
                // As the bank's backend would: a service token, then the subscription, whose secret signs every delivery.
                let backend = BankBackend(server: url, credentials: credentials, http: http)
                let events = ["payment.authorized", "device.registered"]
                receiver.trust(secret: try await backend.subscribe(receiver.url, events: events, token: try await backend.token()))
            }
            let api = BioAuthAPI(serverURL: url, transport: AsyncHTTPClientTransport(configuration: .init(client: http, timeout: .seconds(30))))
            let rawRate = Self.rawVerifyRate()
            log(String(format: "raw P-256 verify on one core: %.0f/s", rawRate))
            let enrollStart = ContinuousClock.now
            let count = max(options.devices, options.concurrency)
            // The baseline signs nothing in, so its workers need no enrolled device (and no bcrypt to make one).
            let devices = options.mix == .baseline ? (0..<count).map { _ in Device(accessToken: "") } : try await enroll(api: api, count: count)
            let passwordUsers = try await passwordAccounts(api: api, count: options.passwordWorkers)
            let enrollment = (ContinuousClock.now - enrollStart).seconds
            if options.mix != .baseline { log(String(format: "enrolled %d devices in %.1f s", devices.count, enrollment)) }
            let deliveredBefore = receiver?.deliveries.count ?? 0
            var delivered: (@Sendable () -> Int)?
            if let hooks = receiver { delivered = { hooks.deliveries.count } }
            let metricsURLs = metrics
            var statementsSent: (@Sendable () async -> Int64?)?
            if !metricsURLs.isEmpty { statementsSent = { await Self.statementsSent(scraping: metricsURLs, http: http) } }
            let cap = options.serverCPUShare.flatMap { share in children.isEmpty ? nil : CPUCap(pids: children.map(\.pid), share: share) }
            let (operations, measured, use): ([String: OperationResult], Double, MeasuredUse)
            do {
                // The servers run freely again before anything stops them (a stopped process would not see SIGTERM).
                defer { cap?.stop() }
                (operations, measured, use) = try await drive(
                    workerClient: { worker in try Self.workerAPI(serverURL: servers[worker % servers.count], shared: api) },
                    devices: devices,
                    passwordUsers: passwordUsers,
                    serverPIDs: children.map(\.pid),
                    deliveries: delivered,
                    statementsSent: statementsSent
                )
            }
            let deliveries = receiver.map { Array($0.deliveries.dropFirst(deliveredBefore)) }
            try await http.shutdown()
            await stopServers()
            return BenchResult(
                options: options,
                measuredSeconds: measured,
                operations: operations,
                rawVerifyPerSecond: rawRate,
                peakResidentBytes: options.server == nil ? use.peakResidentBytes : nil,
                enrollmentSeconds: enrollment,
                cores: cores,
                serverCPUSeconds: use.serverCPUSeconds,
                benchCPUSeconds: use.benchCPUSeconds,
                databaseThreadCPUSeconds: use.databaseThreadCPUSeconds,
                postgres: use.postgres,
                webhooks: deliveries.map {
                    WebhookUse(measured: use.webhookDeliveries ?? 0, unverified: $0.filter { !$0.verified }.count)
                }
            )
        } catch {
            try? await http.shutdown()
            await stopServers()
            throw error
        }
    }

    /// The client one worker drives the server with: the client library over a connection of the worker's own
    /// (``BenchConnection``) for a plain-http server, else over the shared AsyncHTTPClient.
    static func workerAPI(serverURL: URL, shared: BioAuthAPI) throws -> (BioAuthAPI, BenchConnection?) {
        guard serverURL.scheme == "http" else { return (shared, nil) }
        let connection = try BenchConnection(serverURL: serverURL)
        return (BioAuthAPI(serverURL: serverURL, transport: connection), connection)
    }

    /// This process's executable, which has the `serve` command.
    static func ownExecutable() throws -> URL {
        if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") { return URL(fileURLWithPath: path) }
        if let url = Bundle.main.executableURL { return url }
        throw BenchError("cannot find this program's executable to start the server process")
    }

    /// Verifications of one P-256 signature per second on one core, for one second.
    static func rawVerifyRate() -> Double {
        let key = P256.Signing.PrivateKey()
        let message = Data(repeating: 7, count: 128)
        let signature = try! key.signature(for: message)
        let start = ContinuousClock.now
        var count = 0
        while ContinuousClock.now - start < .seconds(1) {
            for _ in 0..<50 where key.publicKey.isValidSignature(signature, for: message) { count += 1 }
        }
        return Double(count) / (ContinuousClock.now - start).seconds
    }

    /// Accounts with a bound device key, `count` of them, made a few at a time.
    func enroll(api: BioAuthAPI, count: Int) async throws -> [Device] {
        try await withThrowingTaskGroup(of: Device.self) { group in
            var devices: [Device] = []
            for index in 0..<count {
                if index >= 8 { devices.append(try await group.next()!) }
                group.addTask {
                    let username = "bench-\(UUID().uuidString.prefix(8).lowercased())-\(index)"
                    _ = try await api.createAccount(username: username, password: "correct horse battery")
                    let tokens = try await api.signIn(username: username, password: "correct horse battery", installationID: "bench-\(index)")
                    let device = Device(accessToken: tokens.accessToken)
                    let challenge = try await api.registrationChallenge(accessToken: tokens.accessToken)
                    let publicKey = DevicePublicKey(device.key.publicKey)
                    let payload = try SignedPayload(
                        purpose: .register,
                        relyingPartyID: challenge.relyingPartyID,
                        challenge: challenge.challenge,
                        keyID: device.keyID,
                        counter: 0
                    )
                    _ = try await api.registerDevice(
                        challengeID: challenge.id,
                        publicKey: publicKey,
                        biometryKind: .faceID,
                        deviceName: "Bench \(index)",
                        counter: 0,
                        signature: try device.key.signature(for: payload.bytes).derRepresentation,
                        accessToken: tokens.accessToken
                    )
                    return device
                }
            }
            for try await device in group { devices.append(device) }
            return devices
        }
    }

    /// Accounts for the password workers.
    func passwordAccounts(api: BioAuthAPI, count: Int) async throws -> [String] {
        var names: [String] = []
        for index in 0..<count {
            let username = "bench-pw-\(UUID().uuidString.prefix(8).lowercased())-\(index)"
            _ = try await api.createAccount(username: username, password: "correct horse battery")
            names.append(username)
        }
        return names
    }

    /// The measured phase: workers loop until the end; results recorded after the warm-up only. Worker `i` gets its
    /// client from `workerClient(i)` (and closes its connection, if any, when done). CPU time and memory are those of the
    /// server processes together when there are any (`serverPIDs`), else of this process.
    func drive(
        workerClient makeAPI: @escaping @Sendable (Int) throws -> (BioAuthAPI, BenchConnection?),
        devices: [Device],
        passwordUsers: [String],
        serverPIDs: [Int32],
        deliveries: (@Sendable () -> Int)? = nil,
        statementsSent: (@Sendable () async -> Int64?)? = nil
    ) async throws
        -> ([String: OperationResult], Double, MeasuredUse)
    {
        let start = ContinuousClock.now
        let measureFrom = start + .milliseconds(Int(options.warmup * 1000))
        // Counted runs (closed loop) end when their operations are done, not at a time: `end` is then never reached.
        let counted = options.rate == nil ? options.operations : nil
        let end = counted == nil ? measureFrom + .milliseconds(Int(options.duration * 1000)) : measureFrom + .seconds(86_400 * 365)
        let slots = OperationSlots(count: counted ?? 0)
        let finished = Finished()
        let progress = ProgressCounter()
        let sampler = Task { () -> Int? in
            var peak: Int?
            var last = 0
            while ContinuousClock.now < end && !finished.value {
                try? await Task.sleep(for: .milliseconds(250))
                if ContinuousClock.now >= measureFrom, let rss = Self.total(over: serverPIDs, ProcessStats.residentBytes(pid:)) {
                    peak = max(peak ?? 0, rss)
                }
                if options.progress, ContinuousClock.now >= measureFrom {
                    let done = progress.value
                    log(String(format: "  %.1f s: %d ops (%d/s now)", (ContinuousClock.now - measureFrom).seconds, done, (done - last) * 4))
                    last = done
                }
            }
            return peak
        }
        // CPU time over exactly the measured phase, of this process, of the server process, and of the server's
        // database thread (in the server process, or in this one when the server runs here).
        let serverHere = options.server == nil && serverPIDs.isEmpty
        // SQLite's database thread is one server's: measured when there is one server.
        let serverPID = serverPIDs.count == 1 ? serverPIDs.first : nil
        let postgresURL = options.postgresURL
        let cpu = Task { () -> (server: Double?, bench: Double?, database: Double?, postgres: PostgresUse?, deliveries: Int?) in
            func database() -> Double? {
                serverPIDs.count == 1 || serverHere ? ProcessStats.threadCPUSeconds(named: SQLiteDatabaseExecutor.threadName, pid: serverPID) : nil
            }
            func postgres() async -> (PostgresActivity, Double?, Int64?)? {
                guard let postgresURL, let activity = try? await PostgresActivity.read(url: postgresURL) else { return nil }
                return (activity, ProcessStats.cpuSeconds(ofProcessesNamed: "postgres"), await statementsSent?())
            }
            try? await Task.sleep(until: measureFrom, clock: .continuous)
            let server = serverPIDs.isEmpty ? nil : Self.total(over: serverPIDs, ProcessStats.cpuSeconds(pid:))
            let bench = ProcessStats.cpuSeconds()
            let databaseBefore = database()
            let postgresBefore = await postgres()
            let deliveredBefore = deliveries?()
            if counted == nil {
                try? await Task.sleep(until: end, clock: .continuous)
            } else {
                await finished.wait()
            }
            let serverAfter = serverPIDs.isEmpty ? nil : Self.total(over: serverPIDs, ProcessStats.cpuSeconds(pid:))
            let benchAfter = ProcessStats.cpuSeconds()
            let databaseAfter = database()
            let postgresAfter = await postgres()
            let delivered = deliveredBefore.flatMap { before in deliveries.map { $0() - before } }
            func used(_ before: Double?, _ after: Double?) -> Double? { before.flatMap { b in after.map { $0 - b } } }
            let postgresUse = postgresBefore.flatMap { before in
                postgresAfter.map { after in
                    PostgresUse(
                        activity: after.0.since(before.0),
                        cpuSeconds: used(before.1, after.1),
                        statementsSent: before.2.flatMap { sent in after.2.map { $0 - sent } }
                    )
                }
            }
            return (used(server, serverAfter), used(bench, benchAfter), used(databaseBefore, databaseAfter), postgresUse, delivered)
        }
        // Open loop: operation i is due at start + i / rate, whichever worker is free takes it, and its latency counts
        // from when it was due.
        let schedule = options.rate.map { OpenLoopSchedule(start: start, rate: $0) }
        let results = try await withThrowingTaskGroup(of: [String: OperationResult].self) { group in
            for worker in 0..<options.concurrency {
                let owned = stride(from: worker, to: devices.count, by: options.concurrency).map { devices[$0] }
                guard !owned.isEmpty else { continue }
                group.addTask {
                    let (api, connection) = try makeAPI(worker)
                    var results: [String: OperationResult] = [:]
                    var turn = worker
                    var done = 0
                    while true {
                        let began: ContinuousClock.Instant
                        if let schedule {
                            guard let due = schedule.next(before: end) else { break }
                            if due > ContinuousClock.now { try? await Task.sleep(until: due, clock: .continuous) }
                            began = due
                        } else if counted != nil {
                            // Warm-up operations take no slot; measured ones each take one until none is left.
                            guard ContinuousClock.now < measureFrom || slots.take() else { break }
                            began = ContinuousClock.now
                        } else {
                            guard ContinuousClock.now < end else { break }
                            began = ContinuousClock.now
                        }
                        let device = owned[done % owned.count]
                        done += 1
                        let operation = options.mix.operation(turn: turn)
                        turn += 1
                        let name = operation.rawValue
                        let outcome = await Self.attempt {
                            switch operation {
                            case .signIn: try await signIn(api, device)
                            case .payment: try await pay(api, device)
                            case .baseline: try await baseline(api)
                            case .challenge: _ = try await api.signInChallenge(keyID: device.keyID)
                            }
                        }
                        let micros = UInt64(max(1, (ContinuousClock.now - began).seconds * 1_000_000))
                        // Closed loop: what started and ended in the window. Open loop: everything due in the window,
                        // however late it ended (a late end is the queueing the run is there to show).
                        if began >= measureFrom && (schedule != nil || counted != nil || ContinuousClock.now <= end) {
                            record(
                                &results[name, default: OperationResult(seriesSeconds: options.seriesSeconds)],
                                micros,
                                outcome,
                                at: began - measureFrom
                            )
                            if outcome == nil { progress.add() }
                        }
                    }
                    await connection?.close()
                    return results
                }
            }
            for (index, username) in passwordUsers.enumerated() {
                group.addTask {
                    let (api, connection) = try makeAPI(options.concurrency + index)
                    var results: [String: OperationResult] = [:]
                    // A counted run measures at least one password sign-in, and goes on while biometric slots are left.
                    var measured = false
                    while counted == nil ? ContinuousClock.now < end : (!measured || !slots.exhausted) {
                        let began = ContinuousClock.now
                        let outcome = await Self.attempt {
                            _ = try await api.signIn(username: username, password: "correct horse battery", installationID: "bench-pw-\(index)")
                        }
                        let micros = UInt64(max(1, (ContinuousClock.now - began).seconds * 1_000_000))
                        if began >= measureFrom && ContinuousClock.now <= end {
                            record(
                                &results["password_sign_in", default: OperationResult(seriesSeconds: options.seriesSeconds)],
                                micros,
                                outcome,
                                at: began - measureFrom
                            )
                            measured = true
                        }
                    }
                    await connection?.close()
                    return results
                }
            }
            var merged: [String: OperationResult] = [:]
            for try await partial in group {
                for (name, result) in partial { merged[name, default: OperationResult()].merge(result) }
            }
            return merged
        }
        let measuredSeconds = counted == nil ? options.duration : max((ContinuousClock.now - measureFrom).seconds, 0.001)
        finished.set()
        let peak = await sampler.value
        let (serverCPU, benchCPU, databaseCPU, postgres, delivered) = await cpu.value
        return (
            results, measuredSeconds,
            MeasuredUse(
                peakResidentBytes: peak,
                serverCPUSeconds: serverCPU,
                benchCPUSeconds: benchCPU,
                databaseThreadCPUSeconds: databaseCPU,
                postgres: postgres,
                webhookDeliveries: delivered
            )
        )
    }

    /// The statements the servers whose metrics are at `urls` have sent to PostgreSQL so far, added up
    /// (`bioauth_database_statements_total{engine="postgres"}`); `nil` when any of them does not answer or has no such
    /// series.
    static func statementsSent(scraping urls: [URL], http: HTTPClient) async -> Int64? {
        var total: Int64 = 0
        for url in urls {
            guard let response = try? await http.execute(HTTPClientRequest(url: url.absoluteString), timeout: .seconds(5)),
                response.status == .ok,
                let body = try? await response.body.collect(upTo: 4 << 20),
                let sent = postgresStatementsSent(inExposition: String(buffer: body))
            else { return nil }
            total += sent
        }
        return total
    }

    /// The value of `bioauth_database_statements_total{engine="postgres"}` in a Prometheus text exposition.
    static func postgresStatementsSent(inExposition text: String) -> Int64? {
        ServerMetrics.sample(#"bioauth_database_statements_total{engine="postgres"}"#, inExposition: text)
            .flatMap { Int64(exactly: $0.rounded()) }
    }

    /// A reading of each process in `pids` added up (of this process when `pids` is empty); `nil` when any is missing.
    static func total<Value: AdditiveArithmetic>(over pids: [Int32], _ read: (Int32?) -> Value?) -> Value? {
        guard !pids.isEmpty else { return read(nil) }
        var sum = Value.zero
        for pid in pids {
            guard let value = read(pid) else { return nil }
            sum += value
        }
        return sum
    }

    /// Counts one measured operation that began (or was due) `offset` into the measured phase.
    private func record(_ result: inout OperationResult, _ micros: UInt64, _ error: String?, at offset: Duration) {
        if let error {
            result.errors[error, default: 0] += 1
        } else {
            result.recordSuccess(micros: micros)
        }
        result.series?.add(offset: offset.seconds, micros: micros, failed: error != nil)
    }

    /// Runs `body`; `nil` on success, else the problem code (or `transport_error`).
    static func attempt(_ body: () async throws -> Void) async -> String? {
        do {
            try await body()
            return nil
        } catch {
            return APIProblem.code(of: error) ?? "transport_error"
        }
    }

    /// Biometric sign-in: challenge → sign → verify → session. The new session replaces the device's previous one.
    func signIn(_ api: BioAuthAPI, _ device: Device) async throws {
        let challenge = try await api.signInChallenge(keyID: device.keyID)
        device.counter += 1
        let payload = try SignedPayload(
            purpose: .login,
            relyingPartyID: challenge.relyingPartyID,
            challenge: challenge.challenge,
            keyID: device.keyID,
            counter: device.counter
        )
        let tokens = try await api.signInWithBiometrics(
            challengeID: challenge.id,
            keyID: device.keyID,
            counter: device.counter,
            signature: try device.key.signature(for: payload.bytes).derRepresentation
        )
        device.accessToken = tokens.accessToken
    }

    /// The baseline: two health checks, the number of requests a sign-in makes, each a read-only unit of work on the
    /// database thread. Nothing signed, no JSON body sent.
    func baseline(_ api: BioAuthAPI) async throws {
        try await api.ready()
        try await api.ready()
    }

    /// The payee the payment mix pays. A server the bench did not start must have it registered
    /// (`bioauth admin payee register merchant-coffee-042 --name "Coffee Shop"`).
    static let payee = (id: "merchant-coffee-042", name: "Coffee Shop")

    /// Registers ``payee`` in the database of a server the bench starts, as the bank would, and with `webhooks` makes the
    /// bank's backend a service client that may subscribe to webhooks (what `bioauth admin service create` does); returns
    /// its credentials.
    static func prepare(_ database: String, webhooks: Bool) async throws -> ServiceClients.Credentials? {
        var logger = Logger(label: "bioauth-bench")
        logger.logLevel = .error
        let executor = try await openDatabase(database, logger: logger)
        do {
            _ = try await PayeeRegistry(database: executor).register(id: payee.id, name: payee.name)
            let credentials = webhooks ? try await ServiceClients(database: executor).create(name: "bench-bank", scopes: ["webhooks:write"]) : nil
            try await executor.close()
            return credentials
        } catch {
            try? await executor.close()
            throw error
        }
    }

    /// Payment authorization: create → challenge → sign the canonical transaction → authorize.
    func pay(_ api: BioAuthAPI, _ device: Device) async throws {
        let payment = try await api.createPayment(
            amount: Money(minorUnits: 8800, currency: .cny),
            payeeID: Self.payee.id,
            idempotencyKey: UUID().uuidString,
            accessToken: device.accessToken
        )
        let challenge = try await api.paymentChallenge(payment.id, keyID: device.keyID, accessToken: device.accessToken)
        let transaction = try payment.transaction()
        device.counter += 1
        let payload = try SignedPayload(
            purpose: .payment,
            relyingPartyID: challenge.relyingPartyID,
            challenge: challenge.challenge,
            keyID: device.keyID,
            counter: device.counter,
            transactionHash: transaction.hash
        )
        _ = try await api.authorizeWithBiometrics(
            payment.id,
            challengeID: challenge.id,
            keyID: device.keyID,
            counter: device.counter,
            transactionHash: transaction.hash,
            signature: try device.key.signature(for: payload.bytes).derRepresentation,
            accessToken: device.accessToken
        )
    }
}

/// When each operation of an open-loop run is due: `start + i / rate` for the i-th, handed out in order.
final class OpenLoopSchedule: @unchecked Sendable {
    private let lock = NSLock()
    private let start: ContinuousClock.Instant
    private let rate: Double
    private var issued: Int64 = 0

    init(start: ContinuousClock.Instant, rate: Double) {
        self.start = start
        self.rate = rate
    }

    /// The next operation's due time, or nil once it would be at or after `end`.
    func next(before end: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        lock.withLock {
            // From the count, not by adding a rounded interval: no drift however long the run.
            let due = start + .nanoseconds(Int64((Double(issued) * 1e9 / rate).rounded()))
            guard due < end else { return nil }
            issued += 1
            return due
        }
    }
}

/// Successful operations so far, for the progress line.
/// The measured operations of a counted run, handed out one at a time to whichever worker asks.
final class OperationSlots: @unchecked Sendable {
    private let lock = NSLock()
    private var left: Int
    init(count: Int) { left = count }
    /// Takes one; false when none is left.
    func take() -> Bool {
        lock.withLock {
            guard left > 0 else { return false }
            left -= 1
            return true
        }
    }
    var exhausted: Bool { lock.withLock { left == 0 } }
}

/// Set once, when every worker of a run is done; waited for by what measures the run.
final class Finished: @unchecked Sendable {
    private let lock = NSLock()
    private var done = false
    func set() { lock.withLock { done = true } }
    var value: Bool { lock.withLock { done } }
    /// Returns once ``set()`` was called (checking every 10 ms).
    func wait() async {
        while !value { try? await Task.sleep(for: .milliseconds(10)) }
    }
}

final class ProgressCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func add() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}

extension Duration {
    /// The duration in seconds.
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

/// A benchmark that cannot run, with the reason.
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
