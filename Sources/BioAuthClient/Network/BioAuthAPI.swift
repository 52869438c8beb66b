import BioAuthCore
import Foundation
import HTTPTypes
import OpenAPIRuntime
import OpenAPIURLSession

/// The BioAuth server's API, generated from the same OpenAPI document the server is generated from, behind
/// a small hand-made surface. Every failure is an ``APIProblem``.
///
/// ```swift
/// // Partial: assumes installationID: String
/// let api = BioAuthAPI(serverURL: URL(string: "https://auth.bank.example")!)
/// let tokens = try await api.signIn(username: "alice", password: "correct horse", installationID: installationID)
/// ```
public struct BioAuthAPI: Sendable {
    let client: Client

    /// An API client for the server at `serverURL`, over URLSession by default. `middlewares` see every
    /// request (the demo's `--verbose` uses one to print them).
    public init(serverURL: URL, transport: any ClientTransport = URLSessionTransport(), middlewares: [any ClientMiddleware] = []) {
        // Compact JSON: OpenAPIRuntime pretty-prints and sorts keys by default; the server reads fields, not bytes.
        client = Client(
            serverURL: serverURL,
            configuration: .init(dateTranscoder: WireDateTranscoder(), jsonEncodingOptions: []),
            transport: transport,
            middlewares: middlewares + [BearerTokenMiddleware()]
        )
    }

    // MARK: Server

    /// Returns when the server answers (`GET /healthz`, liveness); throws an ``APIProblem`` when it does not
    /// (`server_unreachable` when nothing answers).
    public func health() async throws {
        try await call {
            switch try await client.health(.init()) {
            case .ok(let ok): _ = try ok.body.json
            case .default(let status, let problem): throw Self.problem(status, problem)
            }
        }
    }

    /// Returns when the server and its database answer (`GET /readyz`, readiness); throws an ``APIProblem`` when they
    /// do not (`not_ready` when the database does not answer or the server is shutting down, `server_unreachable`
    /// when nothing answers).
    public func ready() async throws {
        try await call {
            switch try await client.ready(.init()) {
            case .ok(let ok): _ = try ok.body.json
            case .serviceUnavailable(let unavailable): throw Self.problem(503, unavailable)
            case .default(let status, let problem): throw Self.problem(status, problem)
            }
        }
    }

    // MARK: Accounts and sessions

    /// Registers an account.
    public func createAccount(username: String, password: String) async throws -> AccountSummary {
        try await call {
            switch try await client.createAccount(.init(body: .json(.init(username: username, password: password)))) {
            case .created(let created):
                let account = try created.body.json
                return AccountSummary(id: account.accountId, username: account.username)
            case .default(let status, let problem): throw Self.problem(status, problem)
            }
        }
    }

    /// Forgot password: sets `newPassword` with the reset code the bank gave the customer after its own identity check.
    /// Every session of the account ends; no device is bound. A wrong, used or expired code, or a wrong username, is
    /// `reset_code_invalid`.
    public func resetPassword(username: String, code: String, newPassword: String) async throws {
        try await call {
            switch try await client.resetPassword(.init(body: .json(.init(username: username, code: code, newPassword: newPassword)))) {
            case .noContent: return
            case .default(let status, let problem): throw Self.problem(status, problem)
            }
        }
    }

    /// Password sign-in from this installation.
    public func signIn(username: String, password: String, installationID: String) async throws -> SessionTokens {
        try await call {
            let body = Components.Schemas.PasswordSignInRequest(username: username, password: password, installationId: installationID)
            switch try await client.signInWithPassword(.init(body: .json(body))) {
            case .created(let created): return Self.tokens(try created.body.json)
            case .default(let status, let problem): throw Self.problem(status, problem)
            }
        }
    }

    /// Exchanges a refresh token for a new pair.
    public func refresh(_ refreshToken: String) async throws -> SessionTokens {
        try await call {
            switch try await client.refreshSession(.init(body: .json(.init(refreshToken: refreshToken)))) {
            case .ok(let ok): return Self.tokens(try ok.body.json)
            case .default(let status, let problem): throw Self.problem(status, problem)
            }
        }
    }

    /// Ends the session of `accessToken`.
    public func signOut(accessToken: String) async throws {
        try await authorized(accessToken) {
            switch try await client.signOut(.init()) {
            case .noContent: return
            case .default(let status, let problem): throw Self.problem(status, problem)
            }
        }
    }

    // MARK: Devices and biometric sign-in

    /// A registration challenge for the signed-in session.
    public func registrationChallenge(accessToken: String) async throws -> ServerChallenge {
        try await authorized(accessToken) {
            switch try await client.createRegistrationChallenge(.init()) {
            case .created(let created): return try Self.challenge(try created.body.json)
            case .default(let status, let problem): throw Self.problem(status, problem)
            }
        }
    }

    /// Binds a device key: `signature` is over the `register` payload of `challenge`. An account with a device already
    /// needs `evidence` (else `device_binding_required`).
    public func registerDevice(
        challengeID: String,
        publicKey: DevicePublicKey,
        biometryKind: BiometryKind,
        deviceName: String,
        counter: UInt64,
        signature: Data,
        appAttest: (keyID: Data, attestation: Data)? = nil,
        evidence: DeviceBindingEvidence? = nil,
        accessToken: String
    ) async throws -> RegisteredDevice {
        guard let kind = Components.Schemas.BiometryKind(rawValue: biometryKind.rawValue) else {
            throw APIProblem(.malformedRequest, detail: "a device key needs a biometric sensor")
        }
        return try await authorized(accessToken) {
            let body = Components.Schemas.RegisterDeviceRequest(
                challengeId: challengeID,
                publicKey: Base64URL.encode(publicKey.x963Representation),
                keyId: Base64URL.encode(publicKey.keyID),
                biometryKind: kind,
                deviceName: deviceName,
                counter: Int64(counter),
                signature: Base64URL.encode(signature),
                appAttest: appAttest.map { .init(keyId: Base64URL.encode($0.keyID), attestation: Base64URL.encode($0.attestation)) }
            )
            var request = body
            switch evidence {
            case .approval(let id): request.approvalId = id
            case .bindingCode(let code): request.bindingCode = code
            case .recoveryCode(let code): request.recoveryCode = code
            case nil: break
            }
            switch try await client.registerDevice(.init(body: .json(request))) {
            case .created(let created): return try Self.device(try created.body.json)
            case .default(let status, let problem): throw Self.problem(status, problem)
            }
        }
    }

    /// Asks the account's bound devices to approve binding the key `keyID` (a `bind_device` request): show the answer's
    /// ``DeviceBindingRequest/matchNumber`` on this device; the customer picks it on the device that approves.
    public func requestDeviceBinding(
        keyID: Data,
        biometryKind: BiometryKind,
        deviceName: String,
        accessToken: String
    ) async throws -> DeviceBindingRequest {
        guard let kind = Components.Schemas.BiometryKind(rawValue: biometryKind.rawValue) else {
            throw APIProblem(.malformedRequest, detail: "a device key needs a biometric sensor")
        }
        return try await authorized(accessToken) {
            let body = Components.Schemas.DeviceBindingRequest(keyId: Base64URL.encode(keyID), biometryKind: kind, deviceName: deviceName)
            switch try await client.requestDeviceBinding(.init(body: .json(body))) {
            case .created(let created):
                let binding = try created.body.json
                return DeviceBindingRequest(approvalID: binding.approvalId, matchNumber: binding.matchNumber, expiresAt: binding.expiresAt)
            case .default(let status, let problem): throw Self.problem(status, problem)
            }
        }
    }

    /// The account's devices.
    public func devices(accessToken: String) async throws -> [RegisteredDevice] {
        try await authorized(accessToken) {
            switch try await client.listDevices(.init()) {
            case .ok(let ok): return try ok.body.json.devices.map(Self.device)
            case .default(let status, let problem): throw Self.problem(status, problem)
            }
        }
    }

    /// Revokes a device of the account.
    public func revokeDevice(_ deviceID: String, accessToken: String) async throws {
        try await authorized(accessToken) {
            switch try await client.revokeDevice(.init(path: .init(deviceId: deviceID))) {
            case .noContent: return
            case .default(let status, let problem): throw Self.problem(status, problem)
            }
        }
    }

    /// Changes the account password; every session of the account ends, this one too. On an account with a device, the
    /// session needs a fresh device key (`step_up_required` otherwise; ``BioAuthFlows/changePassword(current:new:)``
    /// answers it).
    public func changePassword(current: String, new: String, accessToken: String) async throws {
        try await authorized(accessToken) {
            switch try await client.changePassword(.init(body: .json(.init(currentPassword: current, newPassword: new)))) {
            case .noContent: return
            case .default(let status, let problem): throw Self.problem(status, problem)
            }
        }
    }

    /// Ten new recovery codes for the customer to keep, shown once; the set before is void. Sensitive: the session needs
    /// a fresh device key (``BioAuthFlows/createRecoveryCodes()`` answers `step_up_required`).
    public func createRecoveryCodes(accessToken: String) async throws -> [String] {
        try await authorized(accessToken) {
            switch try await client.createCustomerRecoveryCodes(.init()) {
            case .created(let created): return try created.body.json.codes
            case .default(let status, let problem): throw Self.problem(status, problem)
            }
        }
    }

    /// A step-up challenge for this session, to be signed by the account's key `keyID`.
    public func stepUpChallenge(keyID: Data, accessToken: String) async throws -> ServerChallenge {
        try await authorized(accessToken) {
            switch try await client.createStepUpChallenge(.init(body: .json(.init(keyId: Base64URL.encode(keyID))))) {
            case .created(let created): return try Self.challenge(try created.body.json)
            case .default(let status, let problem): throw Self.problem(status, problem)
            }
        }
    }

    /// Steps this session up: `signature` is over the `stepup` payload of `challengeID`'s challenge, whose hash is the
    /// `CanonicalStepUp` of this session and `action`. Returns when the step-up stops counting.
    @discardableResult
    public func stepUp(
        challengeID: String,
        keyID: Data,
        counter: UInt64,
        signature: Data,
        action: StepUpAction,
        appAttestAssertion: Data? = nil,
        accessToken: String
    ) async throws -> Date {
        try await authorized(accessToken) {
            let body = Components.Schemas.StepUpRequest(
                challengeId: challengeID,
                keyId: Base64URL.encode(keyID),
                counter: Int64(counter),
                signature: Base64URL.encode(signature),
                action: action == .any ? nil : action.rawValue,
                appAttestAssertion: appAttestAssertion.map(Base64URL.encode)
            )
            switch try await client.stepUpSession(.init(body: .json(body))) {
            case .ok(let ok): return try ok.body.json.stepUpExpiresAt
            case .default(let status, let problem): throw Self.problem(status, problem)
            }
        }
    }

    /// A sign-in challenge for the registered key `keyID`.
    public func signInChallenge(keyID: Data) async throws -> ServerChallenge {
        try await call {
            switch try await client.createSignInChallenge(.init(body: .json(.init(keyId: Base64URL.encode(keyID))))) {
            case .created(let created): return try Self.challenge(try created.body.json)
            case .default(let status, let problem): throw Self.problem(status, problem)
            }
        }
    }

    /// Biometric sign-in: `signature` is over the `login` payload of `challengeID`'s challenge.
    public func signInWithBiometrics(
        challengeID: String,
        keyID: Data,
        counter: UInt64,
        signature: Data,
        appAttestAssertion: Data? = nil
    ) async throws -> SessionTokens {
        try await call {
            let body = Components.Schemas.BiometricSignInRequest(
                challengeId: challengeID,
                keyId: Base64URL.encode(keyID),
                counter: Int64(counter),
                signature: Base64URL.encode(signature),
                appAttestAssertion: appAttestAssertion.map(Base64URL.encode)
            )
            switch try await client.signInWithBiometrics(.init(body: .json(body))) {
            case .created(let created): return Self.tokens(try created.body.json)
            case .default(let status, let problem): throw Self.problem(status, problem)
            }
        }
    }

    // MARK: Payments

    /// Creates a pending payment to a payee the bank registered; the payment carries the registered name. Pass
    /// `payeeName` to have the server refuse (`payee_name_mismatch`) when the registered name is not the one you expect.
    public func createPayment(
        amount: Money,
        payeeID: String,
        payeeName: String? = nil,
        memo: String? = nil,
        idempotencyKey: String,
        accessToken: String
    )
        async throws -> PaymentDetails
    {
        try await authorized(accessToken) {
            let body = Components.Schemas.CreatePaymentRequest(
                amountMinor: amount.minorUnits,
                currency: amount.currency.code,
                payeeId: payeeID,
                payeeName: payeeName,
                memo: memo
            )
            switch try await client.createPayment(.init(headers: .init(idempotencyKey: idempotencyKey), body: .json(body))) {
            case .created(let created): return try Self.payment(try created.body.json)
            case .default(let status, let problem): throw Self.problem(status, problem)
            }
        }
    }

    /// A payment's current state.
    public func payment(_ paymentID: String, accessToken: String) async throws -> PaymentDetails {
        try await authorized(accessToken) {
            switch try await client.getPayment(.init(path: .init(paymentId: paymentID))) {
            case .ok(let ok): return try Self.payment(try ok.body.json)
            case .default(let status, let problem): throw Self.problem(status, problem)
            }
        }
    }

    /// The account's payments, newest first (at most `limit`, 1-200); only those in `status` when given, e.g.
    /// `"pending"` for the ones waiting to be authorized, those the bank's backend asked for included.
    public func payments(status: String? = nil, limit: Int = 50, accessToken: String) async throws -> [PaymentDetails] {
        try await authorized(accessToken) {
            let wanted = try status.map { text -> Operations.ListPayments.Input.Query.StatusPayload in
                guard let value = Operations.ListPayments.Input.Query.StatusPayload(rawValue: text) else {
                    throw APIProblem(.malformedRequest, detail: "status is pending, authorized, cancelled, expired or locked")
                }
                return value
            }
            switch try await client.listPayments(.init(query: .init(limit: limit, status: wanted))) {
            case .ok(let ok): return try ok.body.json.payments.map(Self.payment)
            case .default(let status, let problem): throw Self.problem(status, problem)
            }
        }
    }

    /// A challenge to authorize `paymentID` with the key `keyID`.
    public func paymentChallenge(_ paymentID: String, keyID: Data, accessToken: String) async throws -> ServerChallenge {
        try await authorized(accessToken) {
            let input = Operations.CreatePaymentChallenge.Input(path: .init(paymentId: paymentID), body: .json(.init(keyId: Base64URL.encode(keyID))))
            switch try await client.createPaymentChallenge(input) {
            case .created(let created): return try Self.challenge(try created.body.json)
            case .default(let status, let problem): throw Self.problem(status, problem)
            }
        }
    }

    /// Authorizes with the device key: `signature` is over the `payment` payload carrying `transactionHash`.
    public func authorizeWithBiometrics(
        _ paymentID: String,
        challengeID: String,
        keyID: Data,
        counter: UInt64,
        transactionHash: Data,
        signature: Data,
        appAttestAssertion: Data? = nil,
        accessToken: String
    ) async throws -> PaymentDetails {
        try await authorized(accessToken) {
            let body = Components.Schemas.BiometricAuthorizationRequest(
                challengeId: challengeID,
                keyId: Base64URL.encode(keyID),
                counter: Int64(counter),
                transactionHash: Base64URL.encode(transactionHash),
                signature: Base64URL.encode(signature),
                appAttestAssertion: appAttestAssertion.map(Base64URL.encode)
            )
            switch try await client.authorizePaymentWithBiometrics(.init(path: .init(paymentId: paymentID), body: .json(body))) {
            case .ok(let ok): return try Self.payment(try ok.body.json)
            case .default(let status, let problem): throw Self.problem(status, problem)
            }
        }
    }

    /// Authorizes with the payment PIN (the fallback).
    public func authorizeWithPIN(_ paymentID: String, pin: String, accessToken: String) async throws -> PaymentDetails {
        try await authorized(accessToken) {
            switch try await client.authorizePaymentWithPIN(.init(path: .init(paymentId: paymentID), body: .json(.init(pin: pin)))) {
            case .ok(let ok): return try Self.payment(try ok.body.json)
            case .default(let status, let problem): throw Self.problem(status, problem)
            }
        }
    }

    /// Sets the payment PIN, proven by the account password. On an account with a device, the session needs a fresh device
    /// key too (its sign-in or a step-up): `step_up_required` otherwise; ``BioAuthFlows/setPaymentPIN(_:currentPassword:)``
    /// answers it.
    public func setPaymentPIN(_ pin: String, currentPassword: String, accessToken: String) async throws {
        try await authorized(accessToken) {
            switch try await client.setPaymentPIN(.init(body: .json(.init(pin: pin, currentPassword: currentPassword)))) {
            case .noContent: return
            case .default(let status, let problem): throw Self.problem(status, problem)
            }
        }
    }

    /// The server's receipt-signing keys, to verify receipts offline.
    public func receiptKeys() async throws -> [DevicePublicKey] {
        try await call {
            switch try await client.listReceiptKeys(.init()) {
            case .ok(let ok):
                return try ok.body.json.keys.map { key in
                    guard let bytes = Base64URL.decode(key.publicKey), let publicKey = try? DevicePublicKey(x963Representation: bytes) else {
                        throw APIProblem(.unexpectedResponse, detail: "a receipt key is not a P-256 public key")
                    }
                    return publicKey
                }
            case .default(let status, let problem): throw Self.problem(status, problem)
            }
        }
    }

    // MARK: Plumbing

    func authorized<T: Sendable>(_ accessToken: String, _ body: @Sendable () async throws -> T) async throws -> T {
        try await BearerTokenMiddleware.$token.withValue(accessToken) { try await call(body) }
    }

    /// Turns transport and decoding failures into ``APIProblem``s.
    func call<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let problem as APIProblem {
            throw problem
        } catch let error as ClientError {
            if let problem = error.underlyingError as? APIProblem { throw problem }
            if let response = error.response {
                throw APIProblem(.unexpectedResponse, status: response.status.code, detail: "the server's answer could not be read")
            }
            throw APIProblem(.serverUnreachable, detail: "the server could not be reached: \(error.underlyingError.localizedDescription)")
        }
    }

    static func problem(_ status: Int, _ response: Components.Responses.Problem) -> APIProblem {
        switch response.body {
        case .applicationProblemJson(let problem):
            APIProblem(
                ProblemCode(rawValue: problem.code),
                status: status,
                detail: problem.detail ?? problem.title,
                retryAfter: response.headers.retryAfter,
                stepUp: problem.acrValues.map {
                    APIProblem.StepUpDemand(acrValues: $0, maxAge: problem.maxAge, action: StepUpAction(rawValue: problem.action ?? ""))
                }
            )
        }
    }

    static func tokens(_ tokens: Components.Schemas.SessionTokens) -> SessionTokens {
        SessionTokens(
            sessionID: tokens.sessionId,
            accountID: tokens.accountId,
            accessToken: tokens.accessToken,
            accessTokenExpiresAt: tokens.accessTokenExpiresAt,
            refreshToken: tokens.refreshToken,
            refreshTokenExpiresAt: tokens.refreshTokenExpiresAt
        )
    }

    private static func challenge(_ challenge: Components.Schemas.Challenge) throws -> ServerChallenge {
        guard let bytes = Base64URL.decode(challenge.challenge), bytes.count == 32 else {
            throw APIProblem(.unexpectedResponse, detail: "the challenge is not 32 bytes of base64url")
        }
        return ServerChallenge(
            id: challenge.challengeId,
            challenge: bytes,
            purpose: SignedPayload.Purpose(rawValue: challenge.purpose.rawValue),
            relyingPartyID: challenge.relyingPartyId,
            keyID: challenge.keyId.flatMap(Base64URL.decode),
            paymentID: challenge.paymentId,
            expiresAt: challenge.expiresAt
        )
    }

    private static func device(_ device: Components.Schemas.Device) throws -> RegisteredDevice {
        guard let keyID = Base64URL.decode(device.keyId), let kind = BiometryKind(rawValue: device.biometryKind.rawValue) else {
            throw APIProblem(.unexpectedResponse, detail: "the device record is malformed")
        }
        return RegisteredDevice(
            id: device.deviceId,
            keyID: keyID,
            biometryKind: kind,
            name: device.deviceName,
            installationID: device.installationId,
            revokedAt: device.revokedAt,
            attestation: device.attestation.rawValue,
            boundBy: device.boundBy?.rawValue ?? "password",
            coolingOffUntil: device.coolingOffUntil
        )
    }

    private static func payment(_ payment: Components.Schemas.Payment) throws -> PaymentDetails {
        guard let currency = Currency(code: payment.currency), currency.minorUnitExponent == payment.currencyExponent,
            let hash = Base64URL.decode(payment.transactionHash)
        else { throw APIProblem(.unexpectedResponse, detail: "the payment's currency or hash is malformed") }
        let receipt = payment.receipt.map { receipt in
            PaymentReceipt(
                version: receipt.version,
                paymentId: receipt.paymentId,
                accountId: receipt.accountId,
                amountMinor: receipt.amountMinor,
                currency: receipt.currency,
                currencyExponent: receipt.currencyExponent,
                payeeId: receipt.payeeId,
                payeeName: receipt.payeeName,
                method: receipt.method,
                authorizedAtMs: receipt.authorizedAtMs,
                keyId: receipt.keyId,
                signature: receipt.signature
            )
        }
        return PaymentDetails(
            status: payment.status.rawValue,
            id: payment.paymentId,
            amount: Money(minorUnits: payment.amountMinor, currency: currency),
            payeeID: payment.payeeId,
            payeeName: payment.payeeName,
            payeeVerified: payment.payeeVerified,
            memo: payment.memo,
            transactionHash: hash,
            failedAttempts: payment.failedAttempts,
            expiresAt: payment.expiresAt,
            authorizationMethod: payment.authorizationMethod?.rawValue,
            receipt: receipt
        )
    }
}

/// Adds the bearer token of the current call (a task-local set by ``BioAuthAPI``).
struct BearerTokenMiddleware: ClientMiddleware {
    @TaskLocal static var token: String?

    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        baseURL: URL,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        if let token = Self.token { request.headerFields[.authorization] = "Bearer \(token)" }
        return try await next(request, body, baseURL)
    }
}

/// The API's date-times through ``InternetDateTime`` (OpenAPIRuntime's default uses a locale-aware formatter).
struct WireDateTranscoder: DateTranscoder {
    func encode(_ date: Date) throws -> String { try InternetDateTime().encode(date) }
    func decode(_ string: String) throws -> Date { try InternetDateTime().decode(string) }
}
