import BioAuthCore
import BioAuthTesting
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import SQLKit
import Testing

@testable import BioAuthServer

/// A server over a private database (SQLite in memory, or a fresh PostgreSQL database), bcrypt at cost 4 and a manual clock.
struct TestServer {
    static let relyingPartyID = "bank.example"

    /// Runs `body` against a fresh server, in process (`.router`) or over a real socket (`.live`).
    static func run<R: Sendable>(
        _ setup: TestingSetup = .router,
        backend: StorageBackend = .sqlite,
        logLevel: Logger.Level = .warning,
        logSink: LogSink = LogSink(),
        configure: (inout ServerConfiguration) -> Void = { _ in },
        wrapDatabase: (any DatabaseExecutor) -> any DatabaseExecutor = { $0 },
        _ body: @escaping @Sendable (API) async throws -> R
    ) async throws -> R {
        var configuration = ServerConfiguration.forTests()
        configure(&configuration)
        var logger = Logger(label: "bioauth-test") { _ in CapturingLogHandler(sink: logSink) }
        logger.logLevel = logLevel
        let clock = ManualClock()
        return try await TestDatabase.withOpened(backend, connections: configuration.databaseConnections, logger: logger) { database in
            let (metricsPorts, metricsPort) = AsyncStream.makeStream(of: Int.self)
            let (consolePorts, consolePort) = AsyncStream.makeStream(of: Int.self)
            HangWatchdog.enter("building the server")
            let (app, service) = try await BioAuthServerApplication.build(
                configuration: configuration,
                database: wrapDatabase(database),
                clock: clock,
                random: SystemRandomSource(),
                logger: logger,
                onMetricsServerRunning: { channel in
                    metricsPort.yield(channel.localAddress?.port ?? 0)
                    metricsPort.finish()
                },
                onConsoleServerRunning: { channel in
                    consolePort.yield(channel.localAddress?.port ?? 0)
                    consolePort.finish()
                }
            )
            HangWatchdog.enter("starting the server (\(setup))")
            let result = try await app.test(setup) { client in
                HangWatchdog.enter("in the test's body")
                let result = try await body(
                    API(client: client, database: database, clock: clock, service: service, metricsPorts: metricsPorts, consolePorts: consolePorts)
                )
                HangWatchdog.enter("stopping the server")
                return result
            }
            HangWatchdog.enter("the server stopped")
            return result
        }
    }
}

/// Collects every log line a test server writes.
final class LogSink: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    func append(_ line: String) { lock.withLock { lines.append(line) } }
    var text: String { lock.withLock { lines.joined(separator: "\n") } }
}

/// A log handler that writes into a ``LogSink`` (message and metadata).
struct CapturingLogHandler: LogHandler {
    let sink: LogSink
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
    func log(event: LogEvent) {
        // As the server's own handlers do (LogFormat.logger): the request's id and trace on every line.
        let all = self.metadata.merging(Logger.MetadataProvider.bioAuthRequest.get()) { $1 }.merging(event.metadata ?? [:]) { $1 }
        sink.append("\(event.level) \(event.message) \(all)")
    }
}

/// A reply: status, code (for problems) and the JSON body.
struct Reply: @unchecked Sendable {
    let status: Int
    let json: [String: Any]
    let raw: String
    var headers = HTTPFields()

    var code: String? { json["code"] as? String }
    subscript(key: String) -> String? { json[key] as? String }
}

/// Requests against a test server, plus direct access to its database.
struct API: Sendable {
    let client: any TestClientProtocol
    let database: any DatabaseExecutor
    let clock: ManualClock
    /// The server's logic behind the routes (tests reach into what it remembers).
    let service: BioAuthService
    /// The metrics listener's port once it listens (with `metricsPort` configured and `.live`).
    let metricsPorts: AsyncStream<Int>
    /// The console listener's port once it listens (with `consolePort` configured and `.live`).
    var consolePorts = AsyncStream<Int> { $0.finish() }

    @discardableResult
    func call(
        _ method: HTTPRequest.Method,
        _ path: String,
        json: [String: any Sendable]? = nil,
        body: String? = nil,
        token: String? = nil,
        headers extra: HTTPFields = [:]
    ) async throws -> Reply {
        var headers = extra
        var buffer: ByteBuffer?
        if let json {
            buffer = ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: json))
            headers[.contentType] = "application/json"
        } else if let body {
            buffer = ByteBuffer(string: body)
            if headers[.contentType] == nil { headers[.contentType] = "application/json" }
        }
        if let token { headers[.authorization] = "Bearer \(token)" }
        let response = try await client.execute(uri: path, method: method, headers: headers, body: buffer)
        let raw = String(buffer: response.body)
        let parsed = (try? JSONSerialization.jsonObject(with: Data(raw.utf8))) as? [String: Any] ?? [:]
        if response.status.code >= 400 {
            #expect(response.headers[.contentType] == "application/problem+json", "\(method) \(path): \(raw)")
            #expect(parsed["code"] is String, "\(method) \(path): no code in \(raw)")
        }
        return Reply(status: response.status.code, json: parsed, raw: raw, headers: response.headers)
    }

    // MARK: Flows

    func createAccount(_ username: String = "alice", password: String = "correct horse") async throws {
        let reply = try await call(.post, "/v1/accounts", json: ["username": username, "password": password])
        try #require(reply.status == 201, "create account: \(reply.raw)")
    }

    func signIn(_ username: String = "alice", password: String = "correct horse", installation: String = "phone-1") async throws -> Tokens {
        let reply = try await call(.post, "/v1/sessions", json: ["username": username, "password": password, "installationId": installation])
        try #require(reply.status == 201, "sign in: \(reply.raw)")
        return Tokens(reply)
    }

    /// An account signed in on `installation`, with `key` registered; returns the tokens and the device id.
    func enrolled(_ key: TestKey, username: String = "alice", installation: String = "phone-1") async throws -> (Tokens, String) {
        try await createAccount(username)
        let tokens = try await signIn(username, installation: installation)
        let device = try await register(key, token: tokens.access)
        try #require(device.status == 201, "register: \(device.raw)")
        return (tokens, try #require(device["deviceId"]))
    }

    func register(
        _ key: TestKey,
        token: String,
        counter: UInt64 = 0,
        name: String = "Alice's iPhone",
        purpose: SignedPayload.Purpose = .register,
        evidence: [String: String] = [:]
    )
        async throws -> Reply
    {
        let challenge = try await call(.post, "/v1/devices/challenges", token: token)
        try #require(challenge.status == 201, "registration challenge: \(challenge.raw)")
        var body: [String: any Sendable] = [
            "challengeId": try #require(challenge["challengeId"]), "publicKey": key.publicKey, "keyId": key.keyID,
            "biometryKind": "faceID", "deviceName": name, "counter": Int(counter),
            "signature": try key.sign(purpose, challenge: try #require(challenge["challenge"]), counter: counter),
        ]
        for (name, value) in evidence { body[name] = value }
        return try await call(.post, "/v1/devices", json: body, token: token)
    }

    /// `key` bound to `username`'s account as one more device, with a binding code the bank's backend asked for (the
    /// binding policy lets a password alone bind only an account's first device).
    func bind(_ key: TestKey, token: String, username: String = "alice", name: String = "Alice's iPhone") async throws -> Reply {
        let desk = AuthenticatedService(clientID: "test-binding-desk", scopes: ["bindings:write"])
        let code = try await service.issueBindingCode(account: username, client: desk).code
        return try await register(key, token: token, name: name, evidence: ["bindingCode": code])
    }

    func signInChallenge(_ key: TestKey) async throws -> Reply {
        try await call(.post, "/v1/sessions/biometric/challenges", json: ["keyId": key.keyID])
    }

    /// Biometric sign-in; `signer` signs (another key to forge), `purpose` is what it signs for.
    func biometricSignIn(
        _ key: TestKey,
        counter: UInt64,
        signer: TestKey? = nil,
        purpose: SignedPayload.Purpose = .login,
        challenge: Reply? = nil
    ) async throws -> Reply {
        let issued: Reply
        if let challenge {
            issued = challenge
        } else {
            issued = try await signInChallenge(key)
        }
        try #require(issued.status == 201, "sign-in challenge: \(issued.raw)")
        return try await call(
            .post,
            "/v1/sessions/biometric",
            json: [
                "challengeId": try #require(issued["challengeId"]), "keyId": key.keyID, "counter": Int(counter),
                "signature": try (signer ?? key).sign(purpose, challenge: try #require(issued["challenge"]), counter: counter, keyID: key.keyIDBytes),
            ]
        )
    }

    // MARK: Step-up

    /// Steps `session` up with `key` (docs/PROTOCOL.md, "Step-up"): a challenge, then the key's `stepup` signature over
    /// the canonical step-up of the session and `action` (`signedAction`, when given, is what the key signs instead).
    @discardableResult
    func stepUp(
        _ key: TestKey,
        counter: UInt64,
        session: Tokens,
        action: String = "",
        signedAction: String? = nil,
        signedSession: String? = nil
    ) async throws -> Reply {
        let challenge = try await call(.post, "/v1/sessions/current/step-up/challenges", json: ["keyId": key.keyID], token: session.access)
        guard challenge.status == 201 else { return challenge }
        var body = try stepUpBody(
            key,
            challenge: challenge,
            counter: counter,
            sessionID: signedSession ?? session.sessionID,
            action: signedAction ?? action
        )
        if !action.isEmpty { body["action"] = action }
        return try await call(.post, "/v1/sessions/current/step-up", json: body, token: session.access)
    }

    /// The body of `POST /v1/sessions/current/step-up` answering `challenge` (the challenge endpoint's reply): `key`'s
    /// proof, signed by `signer` (another key, to forge) over the canonical step-up of `sessionID` and `action`. The
    /// body names no action; the caller adds one.
    func stepUpBody(
        _ key: TestKey,
        challenge: Reply,
        counter: UInt64,
        sessionID: String,
        action: String = "",
        signer: TestKey? = nil
    ) throws -> [String: any Sendable] {
        let hash = try CanonicalStepUp(sessionID: sessionID, action: StepUpAction(rawValue: action)).hash
        return [
            "challengeId": try #require(challenge["challengeId"]), "keyId": key.keyID, "counter": Int(counter),
            "signature": try (signer ?? key).sign(
                .stepUp,
                challenge: try #require(challenge["challenge"]),
                counter: counter,
                keyID: key.keyIDBytes,
                transactionHash: hash
            ),
        ]
    }

    // MARK: Payments

    func setPIN(_ pin: String = "258046", token: String, password: String = "correct horse") async throws -> Reply {
        try await call(.put, "/v1/me/payment-pin", json: ["pin": pin, "currentPassword": password], token: token)
    }

    /// `POST /v1/payments` by the customer's app. Unless `register` is false, the payee is registered first under
    /// `payeeName` as the bank would (when the id and name are valid and it is not registered yet), so the request names
    /// it as registered.
    func createPayment(
        token: String,
        amountMinor: Int = 8800,
        currency: String = "CNY",
        payeeID: String = "merchant-coffee-042",
        payeeName: String? = "Coffee Shop",
        memo: String? = nil,
        idempotencyKey: String = UUID().uuidString,
        register: Bool = true
    ) async throws -> Reply {
        if register, let payeeName { try await registerPayeeIfValid(payeeID, name: payeeName) }
        var json: [String: any Sendable] = ["amountMinor": amountMinor, "currency": currency, "payeeId": payeeID]
        if let payeeName { json["payeeName"] = payeeName }
        if let memo { json["memo"] = memo }
        return try await call(.post, "/v1/payments", json: json, token: token, headers: [HTTPField.Name("Idempotency-Key")!: idempotencyKey])
    }

    /// Registers `payeeID` as `name` as the bank's backend does, unless it is registered already or the id or name is one
    /// registration refuses (tests of such names send them to the payment endpoint unregistered).
    func registerPayeeIfValid(_ payeeID: String, name: String) async throws {
        let registry = PayeeRegistry(database: database, clock: clock)
        guard try await !registry.list().contains(where: { $0.id == payeeID }) else { return }
        _ = try? await registry.register(id: payeeID, name: name)
    }

    /// What a phone does: fetch the payment's challenge, build the transaction from what it shows (after
    /// `tamper` had its way, as a compromised channel might), sign, and send.
    func authorizeWithBiometrics(
        _ payment: Reply,
        key: TestKey,
        counter: UInt64,
        token: String,
        purpose: SignedPayload.Purpose = .payment,
        challenge: Reply? = nil,
        tamper: (inout (paymentID: String, amount: Int64, currency: String, payeeID: String, payeeName: String)) -> Void = { _ in }
    ) async throws -> Reply {
        let paymentID = try #require(payment["paymentId"])
        let issued: Reply
        if let challenge {
            issued = challenge
        } else {
            issued = try await call(.post, "/v1/payments/\(paymentID)/challenges", json: ["keyId": key.keyID], token: token)
        }
        try #require(issued.status == 201, "payment challenge: \(issued.raw)")
        var shown = (
            paymentID: paymentID, amount: (payment.json["amountMinor"] as? Int).map(Int64.init) ?? 0,
            currency: payment["currency"] ?? "", payeeID: payment["payeeId"] ?? "", payeeName: payment["payeeName"] ?? ""
        )
        tamper(&shown)
        let transaction = try CanonicalTransaction(
            paymentID: shown.paymentID,
            amount: Money(minorUnits: shown.amount, currency: try #require(Currency(code: shown.currency))),
            payeeID: shown.payeeID,
            payeeName: shown.payeeName
        )
        let challengeText = try #require(issued["challenge"])
        let payload = try SignedPayload(
            purpose: purpose,
            relyingPartyID: TestServer.relyingPartyID,
            challenge: try #require(Base64URL.decode(challengeText)),
            keyID: key.keyIDBytes,
            counter: counter,
            transactionHash: purpose == .payment ? transaction.hash : Data()
        )
        return try await call(
            .post,
            "/v1/payments/\(paymentID)/biometric-authorization",
            json: [
                "challengeId": try #require(issued["challengeId"]), "keyId": key.keyID, "counter": Int(counter),
                "transactionHash": Base64URL.encode(transaction.hash),
                "signature": Base64URL.encode(try key.privateKey.signature(for: payload.bytes).derRepresentation),
            ],
            token: token
        )
    }

    // MARK: The database

    /// Every row of every table, as text, for "nothing changed" and "no secret stored" checks. The tables are read from
    /// the database, so a table a new migration adds is in the snapshot without anyone listing it.
    func snapshot() async throws -> [String: [[String: String]]] {
        let listTables: SQLQueryString =
            database.dialect == .postgres
            ? "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'"
            : "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        return try await database.transaction { db in
            var tables: [String: [[String: String]]] = [:]
            for table in try await db.raw(listTables).all().map({ try $0.decode(column: "name", as: String.self) }) {
                let rows = try await db.raw(SQLQueryString("SELECT * FROM \(unsafeRaw: table)")).all()
                tables[table] = try rows.map { row in
                    var values: [String: String] = [:]
                    for column in row.allColumns {
                        if try row.decodeNil(column: column) {
                            values[column] = "NULL"
                        } else if let text = try? row.decode(column: column, as: String.self) {
                            values[column] = text
                        } else {
                            values[column] = String(try row.decode(column: column, as: Int64.self))
                        }
                    }
                    return values
                }.sorted { canonical($0) < canonical($1) }
            }
            return tables
        }
    }

    private func canonical(_ row: [String: String]) -> String {
        row.keys.sorted().map { "\($0)=\(row[$0] ?? "")" }.joined(separator: "|")
    }

    func auditKinds() async throws -> [String] {
        try await database.transaction { db in
            try await db.select().columns("kind", "outcome").from("audit_events").orderBy("sequence").all()
                .map { "\(try $0.decode(column: "kind", as: String.self)):\(try $0.decode(column: "outcome", as: String.self))" }
        }
    }
}

struct Tokens: Sendable {
    let access: String
    let refresh: String
    let sessionID: String

    init(_ reply: Reply) {
        access = reply["accessToken"] ?? ""
        refresh = reply["refreshToken"] ?? ""
        sessionID = reply["sessionId"] ?? ""
    }
}

/// A device key in software, signing BioAuth payloads as a phone would.
struct TestKey: Sendable {
    let privateKey = P256.Signing.PrivateKey()

    var publicKey: String { Base64URL.encode(privateKey.publicKey.x963Representation) }
    var keyIDBytes: Data { Data(SHA256.hash(data: privateKey.publicKey.x963Representation)) }
    var keyID: String { Base64URL.encode(keyIDBytes) }

    /// Signs the payload for `purpose` over the base64url `challenge`, naming `keyID` (this key's by default).
    func sign(
        _ purpose: SignedPayload.Purpose,
        challenge: String,
        counter: UInt64,
        keyID: Data? = nil,
        relyingPartyID: String = TestServer.relyingPartyID,
        transactionHash: Data = Data()
    ) throws -> String {
        let payload = try SignedPayload(
            purpose: purpose,
            relyingPartyID: relyingPartyID,
            challenge: try #require(Base64URL.decode(challenge)),
            keyID: keyID ?? keyIDBytes,
            counter: counter,
            transactionHash: transactionHash
        )
        return Base64URL.encode(try privateKey.signature(for: payload.bytes).derRepresentation)
    }
}
