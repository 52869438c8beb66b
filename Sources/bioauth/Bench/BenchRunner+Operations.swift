import AsyncHTTPClient
import BioAuthClient
import BioAuthCore
import BioAuthServer
import Crypto
import Foundation
import Histogram
import Logging
import OpenAPIAsyncHTTPClient

/// The operations the workers run (a sign-in, a payment, the baseline), their set-up, and reading the servers' counts.
extension BenchRunner {
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
    func record(_ result: inout OperationResult, _ micros: UInt64, _ error: String?, at offset: Duration) {
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
