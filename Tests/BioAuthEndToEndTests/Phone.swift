import BioAuthClient
import BioAuthCore
import BioAuthServer
import BioAuthTesting
import Foundation
import Logging
import OpenAPIRuntime
import Synchronization
import Testing

/// A server on loopback for one test.
struct TestBackend {
    let server: LoopbackServer
    let clock: ManualClock
    /// The server's database, for what the bank's support staff do (``revokeAsSupport(customer:)``).
    var database: (any DatabaseExecutor)? = nil

    /// The payees every test backend has registered.
    static let payees = [
        // One id per name: a registry keeps names apart by what a person sees (DisplayName.lookalikeKeys).
        ("merchant-coffee-042", "Coffee Shop"), ("merchant-tea-7", "Tea House"),
    ]

    static func run<R>(
        isolation: isolated (any Actor)? = #isolation,
        configure: (inout ServerConfiguration) -> Void = { _ in },
        prepare: @Sendable (any DatabaseExecutor) async throws -> Void = { _ in },
        _ body: (TestBackend) async throws -> R
    ) async throws -> R {
        var configuration = ServerConfiguration.forTests()
        configure(&configuration)
        var logger = Logger(label: "e2e")
        logger.logLevel = .error
        let clock = ManualClock()
        let opened = Mutex<(any DatabaseExecutor)?>(nil)
        let server = try await LoopbackServer.start(configuration: configuration, clock: clock, logger: logger) { database in
            opened.withLock { $0 = database }
            // The payees the tests pay, registered as the bank's backend would.
            let registry = PayeeRegistry(database: database, clock: clock)
            for (id, name) in Self.payees { _ = try await registry.register(id: id, name: name) }
            try await prepare(database)
        }
        do {
            let result = try await body(TestBackend(server: server, clock: clock, database: opened.withLock { $0 }))
            await server.stop()
            return result
        } catch {
            await server.stop()
            throw error
        }
    }
}

extension TestBackend {
    /// Runs `body` against a backend with the bank's call centre: a service client holding `approvals:write`, shown to
    /// customers as `displayName`; `body` also gets its credentials as an HTTP Basic value.
    static func withCallCentre<R>(
        isolation: isolated (any Actor)? = #isolation,
        displayName: String,
        _ body: (TestBackend, _ basic: String) async throws -> R
    ) async throws -> R {
        let made = Mutex<ServiceClients.Credentials?>(nil)
        return try await run(
            prepare: { database in
                let clients = ServiceClients(database: database)
                let client = try await clients.create(name: "call-centre", scopes: ["approvals:write"])
                try await clients.setDisplayName(clientID: client.clientID, to: displayName)
                made.withLock { $0 = client }
            },
            { backend in
                let client = try #require(made.withLock { $0 })
                return try await body(backend, Data("\(client.clientID):\(client.secret)".utf8).base64EncodedString())
            }
        )
    }
}

extension TestBackend {
    /// The bank's support staff revoke the customer's live devices (an operator of the support role, with a reason), as
    /// the console and `bioauth admin customer revoke-device` do.
    func revokeAsSupport(customer: String) async throws {
        let database = try #require(database)
        let operators = Operators(database: database, bcryptCost: 4)
        if try await !operators.list().contains(where: { $0.name == "mei" }) {
            _ = try await operators.create(name: "mei", role: .support, password: "correct horse battery", mustChangePassword: false)
        }
        let desk = try await SupportDesk.open(database: database, configuration: .forTests(), clock: clock)
        for device in try await desk.customer(customer).devices where device.revokedAt == nil {
            try await desk.revokeDevice(device.id, customer: customer, operator: "mei", reason: "customer reported the device lost")
        }
    }

    /// What the bank's backend does after its own check of a customer: a service token of `client`, then a one-time code
    /// for `account` from `path` (`/v1/service/binding-codes` or `/v1/service/password-reset-codes`).
    func code(at path: String, for account: String, client: ServiceClients.Credentials) async throws -> String {
        let basic = Data("\(client.clientID):\(client.secret)".utf8).base64EncodedString()
        let grant = try await ServicePaymentEndToEndTests.json(
            server.url,
            "POST",
            "/oauth/token",
            basic: basic,
            form: "grant_type=client_credentials"
        )
        let token = try #require(grant["access_token"] as? String)
        let issued = try await ServicePaymentEndToEndTests.json(server.url, "POST", path, bearer: token, body: ["accountId": account])
        return try #require(issued["code"] as? String)
    }
}

/// A simulated phone running the SDK against the backend.
struct Phone {
    let sensor: SimulatedAuthenticator
    let keys: SoftwareDeviceKeyStore
    /// Where `keys` keeps its keys: a test counts them.
    let keyStorage: InMemorySecureStore
    let store: InMemorySecureStore
    let api: BioAuthAPI
    let clock: ManualClock
    let signed: SignedLog

    /// The App Attest provider the next ``launch()`` configures (an app update may add one).
    var appAttest: (any AppAttestProvider)?
    /// The passkey provider the next ``launch()`` configures.
    var passkeys: (any PasskeyProvider)?
    /// The device's name and model the next ``launch()`` configures.
    var deviceName = "Test phone"
    var deviceModel = "iPhone"
    var deviceModelIdentifier: String? = "iPhone15,2"

    init(_ backend: TestBackend, kind: BiometryKind = .faceID, transport: (any ClientTransport)? = nil, appAttest: (any AppAttestProvider)? = nil) {
        self.appAttest = appAttest
        sensor = SimulatedAuthenticator(.init(kind: kind))
        keyStorage = InMemorySecureStore()
        keys = SoftwareDeviceKeyStore(authenticator: sensor, storage: keyStorage)
        store = InMemorySecureStore()
        api = transport.map { BioAuthAPI(serverURL: backend.server.url, transport: $0) } ?? BioAuthAPI(serverURL: backend.server.url)
        clock = ManualClock()
        signed = SignedLog()
    }

    /// The app's launch: new flows over the same stores.
    func launch() async throws -> BioAuthFlows {
        let log = signed
        return try await BioAuthFlows(
            api: api,
            authenticator: sensor,
            keyStore: keys,
            store: store,
            clock: clock,
            configuration: .init(
                language: .english,
                deviceName: deviceName,
                deviceModel: deviceModel,
                deviceModelIdentifier: deviceModelIdentifier,
                expectedRelyingPartyID: "bank.example",
                observer: { event in log.record(event) },
                appAttest: appAttest,
                passkeys: passkeys
            )
        )
    }

    /// Account, password sign-in, 启用 with a matching face.
    func enrolled(_ username: String = "alice") async throws -> BioAuthFlows {
        let flows = try await launch()
        _ = try await flows.createAccount(username: username, password: "correct horse")
        let offer = try await flows.signIn(username: username, password: "correct horse")
        try #require(offer != nil)
        await sensor.script(.match)
        try await flows.enableBiometricSignIn()
        return flows
    }

    /// A second phone of `username`'s: password sign-in, then bound by approval on the first phone (`firstFlows`, signed
    /// in, its sensor `firstSensor`), the customer picking the number this phone shows.
    func boundByApproval(from firstFlows: BioAuthFlows, firstSensor: SimulatedAuthenticator, username: String = "alice") async throws -> BioAuthFlows
    {
        let flows = try await launch()
        _ = try await flows.signIn(username: username, password: "correct horse")
        await sensor.script(.match)
        let pending = try await flows.requestDeviceBinding()
        let request = try #require(try await firstFlows.pendingApprovals().first { $0.kind == .bindDevice })
        try #require(request.numberChoices.contains(pending.matchNumber))
        await firstSensor.script(.match)
        _ = try await firstFlows.approve(request, number: pending.matchNumber)
        try await flows.completeDeviceBinding(pending, pollInterval: .milliseconds(20))
        return flows
    }
}

/// What the flows signed, for replay tests.
final class SignedLog: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [(challengeID: String, payload: SignedPayload, signature: Data)] = []

    func record(_ event: FlowEvent) {
        if case .signed(let challengeID, let payload, let signature) = event {
            lock.withLock { events.append((challengeID, payload, signature)) }
        }
    }

    var last: (challengeID: String, payload: SignedPayload, signature: Data)? { lock.withLock { events.last } }
}

/// The `APIProblem` code `body` throws, or nil.
func problemCode(_ body: () async throws -> Void) async -> ProblemCode? {
    do {
        try await body()
        return nil
    } catch let problem as APIProblem {
        return problem.code
    } catch {
        Issue.record("unexpected \(error)")
        return nil
    }
}
