import BioAuthClient
import BioAuthCore
import BioAuthServer
import BioAuthTesting
import Foundation
import Logging
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The secure environment check end to end: the SDK with the simulated App Attest provider, a deployment that
/// trusts its test CA, over a real socket.
@Suite("App Attest end to end")
struct AppAttestEndToEndTests {
    static let appID = "ABCDE12345.com.bank.app"
    static let ca = try! SimulatedAppAttestProvider.TestCA()

    static func run(
        _ mode: AppAttestPolicy.Mode,
        environments: Set<AppAttestEnvironment> = [.production],
        _ body: (TestBackend) async throws -> Void
    )
        async throws
    {
        try await TestBackend.run(
            configure: { configuration in
                configuration.appAttest.mode = mode
                configuration.appAttest.allowedAppIDs = [appID]
                configuration.appAttest.environments = environments
                configuration.appAttest.trustedRoots = [ca.certificate]
            },
            { backend in try await body(backend) }
        )
    }

    /// The problem code `body` throws, or nil.
    static func problem(_ body: () async throws -> Void) async -> String? {
        do {
            try await body()
            return nil
        } catch {
            return APIProblem.code(of: error) ?? "\(error)"
        }
    }

    /// Account, password sign-in and 启用 on `phone`; returns the flows and the problem code if 启用 was refused.
    static func enable(_ phone: Phone, _ username: String = "alice") async throws -> (BioAuthFlows, String?) {
        let flows = try await phone.launch()
        _ = try await flows.createAccount(username: username, password: "correct horse")
        _ = try await flows.signIn(username: username, password: "correct horse")
        await phone.sensor.script(.match)
        return (flows, await problem { try await flows.enableBiometricSignIn() })
    }

    /// The account's audit events (kind, outcome, code), over HTTP.
    static func audit(_ backend: TestBackend, token: String) async throws -> [(String, String, String?)] {
        var request = URLRequest(url: backend.server.url.appendingPathComponent("v1/audit"))
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        let (data, _) = try await URLSession.shared.data(for: request)
        let events = try #require((try JSONSerialization.jsonObject(with: data) as? [String: Any])?["events"] as? [[String: Any]])
        return events.map { ($0["kind"] as? String ?? "", $0["outcome"] as? String ?? "", $0["code"] as? String) }
    }

    @Test("require: a genuine app enables, signs in and pays; its device is marked attested")
    func genuineApp() async throws {
        try await Self.run(.require) { backend in
            let phone = Phone(backend, appAttest: SimulatedAppAttestProvider(ca: Self.ca, appID: Self.appID, clock: backend.clock))
            let (flows, refused) = try await Self.enable(phone)
            #expect(refused == nil)
            let token = try await flows.accessToken()
            #expect(try await phone.api.devices(accessToken: token).first?.attestation == "apple-appattest")
            try await flows.signOut()
            await phone.sensor.script(.match)
            try await flows.signInWithBiometrics()
            let payment = try await phone.api.createPayment(
                amount: Money(minorUnits: 8800, currency: .cny),
                payeeID: "merchant-coffee-042",
                payeeName: "Coffee Shop",
                idempotencyKey: "order-1",
                accessToken: try await flows.accessToken()
            )
            await phone.sensor.script(.match)
            #expect(try await flows.pay(payment.id).status == "authorized")
            let kinds = try await Self.audit(backend, token: try await flows.accessToken()).map(\.0)
            #expect(kinds.filter { $0 == "app_assertion" }.count == 2 && kinds.contains("app_attestation"))
        }
    }

    @Test(
        "require: each attack is refused with its own code, and nothing is bound",
        arguments: [
            ("no App Attest at all", "app_attest_missing"),
            ("the Simulator (unsupported)", "app_attest_missing"),
            ("a certificate from another CA", "app_attest_untrusted_chain"),
            ("an attestation for other client data", "app_attest_nonce_mismatch"),
            ("another app", "app_attest_app_id_mismatch"),
            ("a development build", "app_attest_environment_mismatch"),
        ]
    )
    func attestationAttacks(attack: String, code: String) async throws {
        try await Self.run(.require) { backend in
            let provider: SimulatedAppAttestProvider?
            switch attack {
            case "no App Attest at all": provider = nil
            case "the Simulator (unsupported)":
                provider = SimulatedAppAttestProvider(ca: Self.ca, appID: Self.appID, isSupported: false, clock: backend.clock)
            case "a certificate from another CA": provider = SimulatedAppAttestProvider(ca: try .init(), appID: Self.appID, clock: backend.clock)
            case "an attestation for other client data":
                provider = SimulatedAppAttestProvider(ca: Self.ca, appID: Self.appID, clock: backend.clock)
                await provider?.setTamper(.wrongNonce)
            case "another app": provider = SimulatedAppAttestProvider(ca: Self.ca, appID: "ZZZZZ99999.com.evil.clone", clock: backend.clock)
            default: provider = SimulatedAppAttestProvider(ca: Self.ca, appID: Self.appID, environment: "development", clock: backend.clock)
            }
            let phone = Phone(backend, appAttest: provider)
            let (flows, refused) = try await Self.enable(phone)
            #expect(refused == code, "\(attack)")
            #expect(await flows.snapshot.biometricSignIn.binding == nil)
            #expect(try await phone.api.devices(accessToken: try await flows.accessToken()).isEmpty)
            let failures = try await Self.audit(backend, token: try await flows.accessToken()).filter { $0.0 == "app_attestation" }
            #expect(failures.map(\.1) == ["failure"] && failures.first?.2 == code)
        }
    }

    /// A phone that turned biometric sign-in on under require and paid once with it; from then on its App Attest
    /// assertions repeat their counter, as a cloned key's would.
    static func clonedAfterOnePayment(_ backend: TestBackend) async throws -> (Phone, BioAuthFlows) {
        let provider = SimulatedAppAttestProvider(ca: Self.ca, appID: Self.appID, clock: backend.clock)
        let phone = Phone(backend, appAttest: provider)
        let (flows, refused) = try await Self.enable(phone)
        #expect(refused == nil)
        let first = try await phone.api.createPayment(
            amount: Money(minorUnits: 100, currency: .cny),
            payeeID: "merchant-coffee-042",
            payeeName: "Coffee Shop",
            idempotencyKey: "order-1",
            accessToken: try await flows.accessToken()
        )
        await phone.sensor.script(.match)
        _ = try await flows.pay(first.id)
        await provider.setTamper(.repeatCounter)
        return (phone, flows)
    }

    @Test("require: a replayed assertion counter (a cloned key) is refused; the payment stays pending")
    func replayedAssertion() async throws {
        try await Self.run(.require) { backend in
            let (phone, flows) = try await Self.clonedAfterOnePayment(backend)
            let second = try await phone.api.createPayment(
                amount: Money(minorUnits: 1200, currency: .cny),
                payeeID: "merchant-tea-7",
                payeeName: "Tea House",
                idempotencyKey: "order-2",
                accessToken: try await flows.accessToken()
            )
            await phone.sensor.script(.match)
            #expect(await Self.problem { _ = try await flows.pay(second.id) } == "app_attest_counter_replayed")
            #expect(try await phone.api.payment(second.id, accessToken: try await flows.accessToken()).status == "pending")
        }
    }

    @Test("require: failed App Attest checks on a payment count toward its lock like bad signatures")
    func failedAssertionsLockThePayment() async throws {
        try await Self.run(.require) { backend in
            let (phone, flows) = try await Self.clonedAfterOnePayment(backend)
            let payment = try await phone.api.createPayment(
                amount: Money(minorUnits: 8800, currency: .cny),
                payeeID: "merchant-coffee-042",
                payeeName: "Coffee Shop",
                idempotencyKey: "order-2",
                accessToken: try await flows.accessToken()
            )
            var codes: [String?] = []
            for _ in 0..<6 {
                await phone.sensor.script(.match)
                codes.append(await Self.problem { _ = try await flows.pay(payment.id) })
            }
            #expect(codes == Array(repeating: "app_attest_counter_replayed", count: 5) + ["payment_locked"], "\(codes)")
            #expect(try await phone.api.payment(payment.id, accessToken: try await flows.accessToken()).status == "locked")
        }
    }

    @Test("require: an attested phone still holds the account's place: a second attested phone's password alone binds nothing")
    func attestedDeviceStillCounts() async throws {
        try await TestBackend.run(
            configure: { configuration in
                configuration.appAttest.mode = .require
                configuration.appAttest.allowedAppIDs = [Self.appID]
                configuration.appAttest.trustedRoots = [Self.ca.certificate]
            },
            { backend in
                let first = Phone(backend, appAttest: SimulatedAppAttestProvider(ca: Self.ca, appID: Self.appID, clock: backend.clock))
                #expect(try await Self.enable(first).1 == nil)
                let second = Phone(backend, appAttest: SimulatedAppAttestProvider(ca: Self.ca, appID: Self.appID, clock: backend.clock))
                let flows = try await second.launch()
                _ = try await flows.signIn(username: "alice", password: "correct horse")
                await second.sensor.script(.match)
                #expect(await Self.problem { try await flows.enableBiometricSignIn() } == "device_binding_required")
            }
        )
    }

    @Test("a key registered before require: biometric sign-in turns off with its reason, and turning it on again attests")
    func registeredBeforeRequire() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bioauth-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var configuration = ServerConfiguration.forTests(database: folder.appendingPathComponent("bioauth.sqlite").path)
        configuration.receiptKeyPath = folder.appendingPathComponent("receipt-key.pem").path
        configuration.pinKeyPath = folder.appendingPathComponent("pin-key").path
        var logger = Logger(label: "e2e")
        logger.logLevel = .error
        let clock = ManualClock()
        // The deployment before: App Attest off. The phone binds its key without an attestation.
        let before = try await LoopbackServer.start(configuration: configuration, clock: clock, logger: logger)
        let transport = ForwardingTransport(to: before.url)
        var phone = Phone(TestBackend(server: before, clock: clock), transport: transport)
        let flows = try await phone.enrolled()
        try await flows.signOut()
        await before.stop()
        // The same database, now requiring App Attest; the phone talks to it from now on.
        configuration.appAttest.mode = .require
        configuration.appAttest.allowedAppIDs = [Self.appID]
        configuration.appAttest.trustedRoots = [Self.ca.certificate]
        let after = try await LoopbackServer.start(configuration: configuration, clock: clock, logger: logger)
        transport.target = after.url
        do {
            await phone.sensor.script(.match)
            #expect(await Self.problem { try await flows.signInWithBiometrics() } == "app_attest_missing")
            let snapshot = await flows.snapshot
            #expect(snapshot.biometricSignIn == .turnedOff(reason: .secureEnvironmentRequired))
            #expect(!snapshot.canSignInWithBiometrics)
            #expect(BiometricSignInOffReason.secureEnvironmentRequired.message(in: .english, biometry: .faceID).contains("secure environment"))
            #expect(BiometricSignInOffReason.secureEnvironmentRequired.message(in: .simplifiedChinese, biometry: .faceID).contains("安全环境校验"))
            // The app (updated with App Attest) signs in with the password and turns it on again: a new, attested key.
            phone.appAttest = SimulatedAppAttestProvider(ca: Self.ca, appID: Self.appID, clock: clock)
            let updated = try await phone.launch()
            _ = try await updated.signIn(username: "alice", password: "correct horse")
            await phone.sensor.script(.match)
            try await updated.enableBiometricSignIn()
            try await updated.signOut()
            await phone.sensor.script(.match)
            try await updated.signInWithBiometrics()
            #expect(await updated.snapshot.state == .unlocked)
            await after.stop()
        } catch {
            await after.stop()
            throw error
        }
    }

    @Test("require: PIN payments, which carry no App Attest proof, are refused unless the deployment allows them")
    func pinPaymentsUnderRequire() async throws {
        for allowed in [false, true] {
            try await TestBackend.run(
                configure: { configuration in
                    configuration.appAttest.mode = .require
                    configuration.appAttest.allowedAppIDs = [Self.appID]
                    configuration.appAttest.trustedRoots = [Self.ca.certificate]
                    configuration.appAttest.allowsPINPaymentsUnderRequire = allowed
                },
                { backend in
                    let phone = Phone(backend, appAttest: SimulatedAppAttestProvider(ca: Self.ca, appID: Self.appID, clock: backend.clock))
                    let (flows, refused) = try await Self.enable(phone)
                    #expect(refused == nil)
                    let token = try await flows.accessToken()
                    try await phone.api.setPaymentPIN("258046", currentPassword: "correct horse", accessToken: token)
                    let payment = try await phone.api.createPayment(
                        amount: Money(minorUnits: 8800, currency: .cny),
                        payeeID: "merchant-coffee-042",
                        payeeName: "Coffee Shop",
                        idempotencyKey: "o-1",
                        accessToken: token
                    )
                    let code = await Self.problem { _ = try await flows.pay(payment.id, pin: "258046") }
                    if allowed {
                        #expect(code == nil)
                    } else {
                        #expect(code == "pin_payments_disabled")
                        #expect(try await phone.api.payment(payment.id, accessToken: token).status == "pending")
                        // Biometric payment, which carries the assertion, still works.
                        await phone.sensor.script(.match)
                        #expect(try await flows.pay(payment.id).status == "authorized")
                    }
                }
            )
        }
    }

    @Test("require: one App Attest key can't vouch for a second device")
    func reusedKey() async throws {
        try await Self.run(.require) { backend in
            let provider = SimulatedAppAttestProvider(ca: Self.ca, appID: Self.appID, clock: backend.clock)
            let first = Phone(backend, appAttest: provider)
            #expect(try await Self.enable(first, "alice").1 == nil)
            await provider.setTamper(.reuseFirstKey)
            let second = Phone(backend, appAttest: provider)
            let (flows, refused) = try await Self.enable(second, "bob")
            #expect(refused == "app_attest_key_reused")
            #expect(try await second.api.devices(accessToken: try await flows.accessToken()).isEmpty)
        }
    }

    @Test("require: a garbled assertion is refused as malformed and nothing is signed in")
    func garbledAssertion() async throws {
        try await Self.run(.require) { backend in
            let phone = Phone(backend, appAttest: SimulatedAppAttestProvider(ca: Self.ca, appID: Self.appID, clock: backend.clock))
            let (flows, refused) = try await Self.enable(phone)
            #expect(refused == nil)
            try await flows.signOut()
            let keyID = try #require(await flows.snapshot.biometricSignIn.binding?.publicKey.keyID)
            let challenge = try await phone.api.signInChallenge(keyID: keyID)
            // A well-signed login payload, but the assertion beside it is not CBOR.
            await phone.sensor.script(.match)
            let context = try await phone.sensor.evaluate(PromptCopy(language: .english).prompt(for: .signIn, biometry: .faceID))
            let tag = try #require(await flows.snapshot.biometricSignIn.binding?.keyTag)
            let payload = try SignedPayload(
                purpose: .login,
                relyingPartyID: challenge.relyingPartyID,
                challenge: challenge.challenge,
                keyID: keyID,
                counter: 99
            )
            let signature = try await phone.keys.sign(payload.bytes, tag: tag, context: context)
            let code = await Self.problem {
                _ = try await phone.api.signInWithBiometrics(
                    challengeID: challenge.id,
                    keyID: keyID,
                    counter: 99,
                    signature: signature,
                    appAttestAssertion: Data([0xFF, 0x00])
                )
            }
            #expect(code == "app_attest_malformed")
        }
    }

    @Test("report: an app without App Attest still works, and every missing check is audited")
    func reportMode() async throws {
        try await Self.run(.report) { backend in
            let phone = Phone(backend)
            let (flows, refused) = try await Self.enable(phone)
            #expect(refused == nil)
            try await flows.signOut()
            await phone.sensor.script(.match)
            try await flows.signInWithBiometrics()
            let token = try await flows.accessToken()
            #expect(try await phone.api.devices(accessToken: token).first?.attestation == "none")
            let checks = try await Self.audit(backend, token: token).filter { $0.0.hasPrefix("app_") }
            #expect(checks.map(\.0).sorted() == ["app_assertion", "app_attestation"])
            #expect(checks.allSatisfy { $0.1 == "failure" && $0.2 == "app_attest_missing" })
        }
    }

    @Test("off: nothing is asked or checked, even from a provider with an untrusted CA")
    func offMode() async throws {
        try await Self.run(.off) { backend in
            let phone = Phone(
                backend,
                appAttest: SimulatedAppAttestProvider(ca: try .init(), appID: "ZZZZZ99999.com.evil.clone", clock: backend.clock)
            )
            let (flows, refused) = try await Self.enable(phone)
            #expect(refused == nil)
            #expect(try await phone.api.devices(accessToken: try await flows.accessToken()).first?.attestation == "none")
        }
    }
}
