import AsyncHTTPClient
import BioAuthClient
import BioAuthCore
import BioAuthServer
import Crypto
import Foundation
import Histogram
import Logging
import OpenAPIAsyncHTTPClient

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
}
