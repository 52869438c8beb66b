import BioAuthClient
import BioAuthCore
import BioAuthServer
import BioAuthTesting
import Foundation
import Synchronization
import Testing

@Suite("Flows end to end over a real socket")
struct FlowsEndToEndTests {
    @Test("password sign-in, the offer, 启用; relaunch → locked → unlocked by Face ID")
    func enableAndUnlock() async throws {
        try await TestBackend.run { backend in
            let phone = Phone(backend)
            let flows = try await phone.enrolled()
            #expect(await flows.snapshot.legacyFlags.description == "YES | YES | YES")
            #expect(await phone.sensor.presentedPrompts.last?.reason == "Confirm with Face ID to turn on Face ID sign-in")
            let devices = try await phone.api.devices(accessToken: try await flows.accessToken())
            #expect(devices.count == 1 && devices[0].name == "Test phone" && devices[0].biometryKind == .faceID)

            let relaunched = try await phone.launch()
            #expect(await relaunched.snapshot.state == .locked)
            await phone.sensor.script(.match)
            #expect(try await relaunched.unlock() == .unlocked)
        }
    }

    @Test("sign out keeps the binding; sign in with Face ID; a replayed signature is refused")
    func biometricSignInAndReplay() async throws {
        try await TestBackend.run { backend in
            let phone = Phone(backend)
            let flows = try await phone.enrolled()
            try await flows.signOut()
            let signedOut = await flows.snapshot
            #expect(signedOut.state == .signedOut && signedOut.canSignInWithBiometrics)
            await phone.sensor.script(.match)
            try await flows.signInWithBiometrics()
            #expect(await flows.snapshot.state == .unlocked)
            #expect(await phone.sensor.presentedPrompts.last?.reason == "Sign in with Face ID")

            let signed = try #require(phone.signed.last)
            #expect(signed.payload.purpose == .login && signed.payload.counter == 1)
            let replay = await problemCode {
                _ = try await phone.api.signInWithBiometrics(
                    challengeID: signed.challengeID,
                    keyID: signed.payload.keyID,
                    counter: signed.payload.counter,
                    signature: signed.signature
                )
            }
            #expect(replay == .challengeUsed)
        }
    }

    /// What an app delegate does (docs/APPLE.md): read the lock synchronously on the main actor. This only compiles
    /// while `appLock` is `nonisolated`; reading an actor's stored property from outside its module otherwise needs `await`.
    @MainActor static func lockForLifecycleObserver(_ flows: BioAuthFlows) -> AppLock { flows.appLock }

    @Test("an app delegate on the main actor gets the app lock without awaiting the flows actor")
    func appLockFromMainActor() async throws {
        try await TestBackend.run { backend in
            let flows = try await Phone(backend).enrolled()
            let lock = await Self.lockForLifecycleObserver(flows)
            #expect(lock === flows.appLock)
        }
    }

    @Test("a stored counter at 2^63 - 1 (a damaged store) is refused with a clear error, never sent or trapped on")
    func exhaustedCounter() async throws {
        try await TestBackend.run { backend in
            let phone = Phone(backend)
            let flows = try await phone.enrolled()
            try await flows.signOut()
            try await phone.store.set(Data(String(SignedPayload.maxCounter).utf8), forKey: "bioauth.key-counter")
            await phone.sensor.script(.match)
            let error = await #expect(throws: SessionError.self) { try await flows.signInWithBiometrics() }
            #expect(error?.code == .corruptState)
            #expect(phone.signed.last?.payload.purpose == .register, "nothing may be signed with an exhausted counter")
        }
    }

    @Test("pay ¥88.00 with Face ID: the prompt shows it, the receipt verifies; the PIN pays when Face ID fails")
    func payments() async throws {
        try await TestBackend.run { backend in
            let phone = Phone(backend)
            let flows = try await phone.enrolled()
            let token = try await flows.accessToken()
            try await phone.api.setPaymentPIN("258046", currentPassword: "correct horse", accessToken: token)
            let coffee = try await phone.api.createPayment(
                amount: Money(minorUnits: 8800, currency: .cny),
                payeeID: "merchant-coffee-042",
                payeeName: "Coffee Shop",
                idempotencyKey: "order-1",
                accessToken: token
            )
            await phone.sensor.script(.match)
            let paid = try await flows.pay(coffee.id)
            #expect(paid.status == "authorized" && paid.receipt?.method == "biometric")
            #expect(await phone.sensor.presentedPrompts.last?.reason == "Pay ¥88.00 to Coffee Shop")
            #expect(await phone.sensor.presentedPrompts.last?.fallbackTitle == "Pay with PIN")

            let tea = try await phone.api.createPayment(
                amount: Money(minorUnits: 1200, currency: .cny),
                payeeID: "merchant-tea-7",
                payeeName: "Tea House",
                idempotencyKey: "order-2",
                accessToken: token
            )
            await phone.sensor.script(.fallback)
            let fallback = try await biometricErrorCode { _ = try await flows.pay(tea.id) }
            #expect(fallback == .userFallback)
            #expect(BiometricError(.userFallback).recovery == .usePassword)
            let byPIN = try await flows.pay(tea.id, pin: "258046")
            #expect(byPIN.status == "authorized" && byPIN.receipt?.method == "pin")
        }
    }

    @Test("receipts without currencyExponent (an older server) still verify; a receipt stating another exponent is refused")
    func receiptExponentFromOlderServers() async throws {
        try await TestBackend.run { backend in
            let rewriter = ReceiptRewriter(to: backend.server.url)
            let phone = Phone(backend, transport: rewriter)
            let flows = try await phone.enrolled()
            let token = try await flows.accessToken()
            func pay(_ key: String) async throws -> PaymentDetails {
                let payment = try await phone.api.createPayment(
                    amount: Money(minorUnits: 8800, currency: .cny),
                    payeeID: "merchant-coffee-042",
                    payeeName: "Coffee Shop",
                    idempotencyKey: key,
                    accessToken: token
                )
                await phone.sensor.script(.match)
                return try await flows.pay(payment.id)
            }
            rewriter.exponent = .removed
            let paid = try await pay("older-server")
            #expect(paid.status == "authorized" && paid.receipt?.currencyExponent == 2)

            rewriter.exponent = .stated(0)
            let refused = await #expect(throws: APIProblem.self) { _ = try await pay("wrong-exponent") }
            #expect(refused?.code == .unexpectedResponse && refused?.detail == "the payment's receipt does not verify")
            rewriter.exponent = .asSent
            #expect(try await pay("as-sent").receipt?.currencyExponent == 2)
        }
    }

    @Test("a device whose name has nothing that can be shown is registered under its model and hardware: an iPad as \"iPad (iPad13,4)\"")
    func deviceNameFallsBackToModel() async throws {
        try await TestBackend.run { backend in
            var phone = Phone(backend)
            phone.deviceName = "🦄✨"
            phone.deviceModel = "iPad"
            phone.deviceModelIdentifier = "iPad13,4"
            let flows = try await phone.enrolled()
            let devices = try await phone.api.devices(accessToken: try await flows.accessToken())
            #expect(devices.map(\.name) == ["iPad (iPad13,4)"])
        }
    }

    @Test("a locked app can't pay, nor hand out its access token, until it is unlocked")
    func lockedCannotPay() async throws {
        try await TestBackend.run { backend in
            let phone = Phone(backend)
            let flows = try await phone.enrolled()
            let token = try await flows.accessToken()
            try await phone.api.setPaymentPIN("258046", currentPassword: "correct horse", accessToken: token)
            let coffee = try await phone.api.createPayment(
                amount: Money(minorUnits: 8800, currency: .cny),
                payeeID: "merchant-coffee-042",
                payeeName: "Coffee Shop",
                idempotencyKey: "o",
                accessToken: token
            )
            let relaunched = try await phone.launch()
            await #expect(throws: SessionError.self) { _ = try await relaunched.pay(coffee.id) }
            await #expect(throws: SessionError.self) { _ = try await relaunched.pay(coffee.id, pin: "258046") }
            // Nor can the app's own code reach the bank's API with the session's token while locked.
            await #expect(throws: SessionError.self) { _ = try await relaunched.accessToken() }
            #expect(await phone.sensor.presentedPrompts.count == 1)
            await phone.sensor.script(.match, .match)
            _ = try await relaunched.unlock()
            #expect(try await relaunched.accessToken().isEmpty == false)
            #expect(try await relaunched.pay(coffee.id).status == "authorized")
        }
    }

    @Test("5 non-matching faces: lockout, the passcode, then Face ID works again")
    func lockout() async throws {
        try await TestBackend.run { backend in
            let phone = Phone(backend)
            _ = try await phone.enrolled()
            let flows = try await phone.launch()
            await phone.sensor.script(.nonMatch, .nonMatch, .nonMatch)
            #expect(try await biometricErrorCode { _ = try await flows.unlock() } == .authenticationFailed)
            await phone.sensor.script(.nonMatch, .nonMatch)
            #expect(try await biometricErrorCode { _ = try await flows.unlock() } == .biometryLockout)
            await phone.sensor.script(.passcode)
            try await flows.recoverFromLockout()
            await phone.sensor.script(.match)
            #expect(try await flows.unlock() == .unlocked)
        }
    }

    @Test("an enrollment change turns biometric sign-in off and says why; the password alone does not turn it on again, the bank's code does")
    func enrollmentChanged() async throws {
        let made = Mutex<ServiceClients.Credentials?>(nil)
        try await TestBackend.run(
            prepare: { database in
                made.withLock { $0 = nil }
                let client = try await ServiceClients(database: database).create(name: "branch", scopes: ["bindings:write"])
                made.withLock { $0 = client }
            },
            { backend in
                let phone = Phone(backend)
                let flows = try await phone.enrolled()
                try await flows.signOut()
                await phone.sensor.changeEnrollment()
                #expect(try await biometricErrorCode { try await flows.signInWithBiometrics() } == .keyInvalidated)
                #expect(await flows.snapshot.biometricSignIn == .turnedOff(reason: .enrollmentChanged))
                let offer = try await flows.signIn(username: "alice", password: "correct horse")
                #expect(offer?.title == "Sign in with Face ID?")
                // The old key's device is still bound on the server, and a password session cannot revoke it (a thief's could
                // not either): the password alone binds nothing; the bank's code does, and the stale device goes with it.
                await phone.sensor.script(.match)
                let refused = await #expect(throws: APIProblem.self) { try await flows.enableBiometricSignIn() }
                #expect(refused?.code == .deviceBindingRequired)
                let client = try #require(made.withLock { $0 })
                let code = try await backend.code(at: "/v1/service/binding-codes", for: "alice", client: client)
                await phone.sensor.script(.match)
                try await flows.enableBiometricSignIn(bindingCode: code)
                let devices = try await phone.api.devices(accessToken: try await flows.accessToken())
                #expect(devices.filter { $0.revokedAt == nil }.map(\.boundBy) == ["binding_code"], "the stale device was revoked")
                try await flows.signOut()
                await phone.sensor.script(.match)
                try await flows.signInWithBiometrics()
                #expect(await flows.snapshot.state == .unlocked)
            }
        )
    }

    @Test(
        "a second phone: the password alone is refused with its recovery, a mistyped code deletes the new key, the bank's code binds it; a denied request binds nothing"
    )
    func secondPhoneByCodeOrDenied() async throws {
        let made = Mutex<ServiceClients.Credentials?>(nil)
        try await TestBackend.run(
            prepare: { database in
                let client = try await ServiceClients(database: database).create(name: "branch", scopes: ["bindings:write"])
                made.withLock { $0 = client }
            },
            { backend in
                let first = Phone(backend)
                let firstFlows = try await first.enrolled()
                let second = Phone(backend, kind: .touchID)
                let flows = try await second.launch()
                _ = try await flows.signIn(username: "alice", password: "correct horse")
                await second.sensor.script(.match)
                do {
                    try await flows.enableBiometricSignIn()
                    Issue.record("a second phone was bound by the password alone")
                } catch let problem as APIProblem {
                    #expect(problem.code == .deviceBindingRequired && problem.recovery == .bindThisDevice)
                    #expect(problem.message(in: .simplifiedChinese).contains("绑定码"))
                }
                #expect(await flows.snapshot.biometricSignIn.binding == nil)
                await second.sensor.script(.match)
                #expect(
                    await problemCode { try await flows.enableBiometricSignIn(bindingCode: "00000-00000-00000-00000-00000") } == .bindingCodeInvalid
                )
                #expect(await second.keyStorage.keys.isEmpty, "the refused key is deleted")

                // Someone else's request on the account: denied on the first phone, it binds nothing.
                await second.sensor.script(.match)
                let pending = try await flows.requestDeviceBinding()
                let request = try #require(try await firstFlows.pendingApprovals().first { $0.kind == .bindDevice })
                _ = try await firstFlows.deny(request.id)
                #expect(await problemCode { try await flows.completeDeviceBinding(pending, pollInterval: .milliseconds(20)) } == .accessDenied)
                #expect(await second.keyStorage.keys.isEmpty)

                let client = try #require(made.withLock { $0 })
                let code = try await backend.code(at: "/v1/service/binding-codes", for: "alice", client: client)
                await second.sensor.script(.match)
                try await flows.enableBiometricSignIn(bindingCode: code.lowercased())
                #expect(await flows.snapshot.biometricSignIn.binding != nil)
                let devices = try await second.api.devices(accessToken: try await flows.accessToken())
                #expect(devices.filter { $0.revokedAt == nil }.map(\.boundBy).sorted() == ["binding_code", "password"])
            }
        )
    }

    @Test("forgot password: the bank's reset code sets the new one and signs in; Face ID sign-in stays on; a wrong code is a message")
    func forgotPassword() async throws {
        let made = Mutex<ServiceClients.Credentials?>(nil)
        try await TestBackend.run(
            prepare: { database in
                let client = try await ServiceClients(database: database).create(name: "branch", scopes: ["passwords:reset"])
                made.withLock { $0 = client }
            },
            { backend in
                let phone = Phone(backend)
                let flows = try await phone.enrolled()
                try await flows.signOut()
                let client = try #require(made.withLock { $0 })
                let code = try await backend.code(at: "/v1/service/password-reset-codes", for: "alice", client: client)
                do {
                    _ = try await flows.resetPassword(username: "alice", code: "00000-00000-00000-00000-00000", newPassword: "new horse battery")
                    Issue.record("a made-up code reset the password")
                } catch let problem as APIProblem {
                    #expect(problem.code == .resetCodeInvalid && problem.message(in: .english).contains("reset code"))
                }
                let offer = try await flows.resetPassword(username: "alice", code: code, newPassword: "new horse battery")
                #expect(offer == nil, "Face ID sign-in is still on: nothing to offer")
                #expect(await flows.snapshot.state == .unlocked)
                try await flows.signOut()
                await phone.sensor.script(.match)
                try await flows.signInWithBiometrics()
            }
        )
    }

    @Test("the second phone is revoked from the first: its biometric sign-in is refused and turned off locally")
    func revokedFromAnotherPhone() async throws {
        try await TestBackend.run { backend in
            let first = Phone(backend)
            let firstFlows = try await first.enrolled()
            let second = Phone(backend, kind: .touchID)
            let secondFlows = try await second.boundByApproval(from: firstFlows, firstSensor: first.sensor)
            try await secondFlows.signOut()

            let secondTag = try #require(await secondFlows.snapshot.biometricSignIn.binding?.keyTag)
            let token = try await firstFlows.accessToken()
            let devices = try await first.api.devices(accessToken: token)
            let touch = try #require(devices.first { $0.biometryKind == .touchID })
            try await first.api.revokeDevice(touch.id, accessToken: token)

            #expect(await problemCode { try await secondFlows.signInWithBiometrics() } == .deviceRevoked)
            #expect(await secondFlows.snapshot.biometricSignIn == .turnedOff(reason: .deviceRevoked))
            #expect(await second.keys.keyState(tag: secondTag) == .absent)
        }
    }

    @Test("turning biometric sign-in off on the phone revokes it on the server and keeps the user signed in")
    func disable() async throws {
        try await TestBackend.run { backend in
            let phone = Phone(backend)
            let flows = try await phone.enrolled()
            try await flows.disableBiometricSignIn()
            #expect(await flows.snapshot.state == .unlocked)
            let devices = try await phone.api.devices(accessToken: try await flows.accessToken())
            #expect(devices.first?.revokedAt != nil)
        }
    }

    @Test("the customer's own recovery codes: made on the phone after one Face ID, one brings a new phone back after the old is lost")
    func recoveryCodes() async throws {
        try await TestBackend.run { backend in
            let lost = Phone(backend)
            let flows = try await lost.enrolled()
            // A new password sign-in on the phone: making codes asks for Face ID once.
            try await flows.signOut()
            _ = try await flows.signIn(username: "alice", password: "correct horse")
            await lost.sensor.script(.match)
            let codes = try await flows.createRecoveryCodes()
            #expect(codes.count == 10)
            #expect(await lost.sensor.presentedPrompts.last?.reason == "Confirm with Face ID to create recovery codes")

            let replacement = Phone(backend)
            let newFlows = try await replacement.launch()
            _ = try await newFlows.signIn(username: "alice", password: "correct horse")
            await replacement.sensor.script(.match)
            try await newFlows.enableBiometricSignIn(recoveryCode: codes[3].lowercased().replacingOccurrences(of: "-", with: " "))
            #expect(await newFlows.snapshot.biometricSignIn.binding != nil)
            let devices = try await replacement.api.devices(accessToken: try await newFlows.accessToken())
            #expect(devices.filter { $0.revokedAt == nil }.map(\.boundBy) == ["recovery_code"])

            // The lost phone: its session is gone, and its Face ID sign-in is refused before a prompt and turned off.
            #expect(try await flows.report(status: 401, body: Data()))
            let refused = await #expect(throws: APIProblem.self) { try await flows.signInWithBiometrics() }
            #expect(refused?.code == .deviceRevoked)
        }
    }

    @Test("an expired access token is refreshed once, transparently")
    func refresh() async throws {
        try await TestBackend.run { backend in
            let phone = Phone(backend)
            let flows = try await phone.enrolled()
            let before = try await flows.accessToken()
            backend.clock.advance(by: 16 * 60)  // the server's clock: it now calls the token expired
            // The phone's clock did not move: the refresh comes from the server's token_expired, then the call is
            // made again and succeeds.
            // Turning it off from this password session revokes the device: sensitive, and the registration's step-up is
            // over, so one Face ID prompt steps the session up first.
            await phone.sensor.script(.match)
            try await flows.disableBiometricSignIn()
            let after = try await flows.accessToken()
            #expect(after != before)
            #expect(try await phone.api.devices(accessToken: after).first?.revokedAt != nil)
        }
    }

    @Test("the server unreachable: a clear error and nothing changed locally")
    func unreachable() async throws {
        let server = try await Self.memoryServer()
        let url = server.url
        await server.stop()
        let store = InMemorySecureStore()
        let sensor = SimulatedAuthenticator()
        let flows = try await BioAuthFlows(
            api: BioAuthAPI(serverURL: url),
            authenticator: sensor,
            keyStore: SoftwareDeviceKeyStore(authenticator: sensor),
            store: store
        )
        let before = try await Self.contents(of: store)
        #expect(await problemCode { _ = try await flows.signIn(username: "alice", password: "correct horse") } == .serverUnreachable)
        #expect(await flows.snapshot.state == .signedOut)
        #expect(try await Self.contents(of: store) == before)
    }

    @Test("the health check answers while the server runs, and says server_unreachable once it has stopped")
    func health() async throws {
        let server = try await Self.memoryServer()
        let api = BioAuthAPI(serverURL: server.url)
        try await api.health()
        await server.stop()
        #expect(await problemCode { try await api.health() } == .serverUnreachable)
    }

    @Test("a locked account tells the app how long to wait (Retry-After), and the user reads it in their language")
    func lockSaysHowLong() async throws {
        try await TestBackend.run(
            configure: { $0.accountLockDuration = 300 },
            { backend in
                let api = BioAuthAPI(serverURL: backend.server.url)
                _ = try await api.createAccount(username: "carol", password: "correct horse")
                var last: APIProblem?
                for _ in 1...5 {
                    do { _ = try await api.signIn(username: "carol", password: "wrong password", installationID: "p") } catch let problem
                        as APIProblem
                    {
                        last = problem
                    }
                }
                let locked = try #require(last)
                #expect(locked.code == .accountLocked && locked.retryAfter == 300 && locked.recovery == .tryLater)
                #expect(locked.message(in: .english) == "Too many wrong passwords. Try again in 5 minutes.")
                #expect(locked.message(in: .simplifiedChinese) == "密码错误次数过多，请 5 分钟后再试。")
            }
        )
    }

    @Test("a 5xx without a problem document: a clear error and nothing changed locally")
    func serverError() async throws {
        try await TestBackend.run { backend in
            let phone = Phone(backend, transport: BrokenGateway())
            let flows = try await phone.launch()
            let before = try await Self.contents(of: phone.store)
            #expect(await problemCode { _ = try await flows.signIn(username: "alice", password: "correct horse") } == .unexpectedResponse)
            #expect(await flows.snapshot.state == .signedOut)
            #expect(try await Self.contents(of: phone.store) == before)
        }
    }
}

extension FlowsEndToEndTests {
    /// A real server on a loopback port over an in-memory database, for tests that stop it.
    static func memoryServer() async throws -> LoopbackServer {
        try await LoopbackServer.start(configuration: .forTests(), logger: .init(label: "e2e"))
    }

    /// Every key and value of a store.
    static func contents(of store: InMemorySecureStore) async throws -> [String: Data] {
        var contents: [String: Data] = [:]
        for key in await store.keys { contents[key] = try await store.data(forKey: key) }
        return contents
    }
}
