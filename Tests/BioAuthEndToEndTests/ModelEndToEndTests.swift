import BioAuthClient
import BioAuthCore
import BioAuthServer
import BioAuthTesting
import Foundation
import Logging
import Observation
import Synchronization
import Testing

/// The SwiftUI app's object (`BioAuthModel`) against a server on loopback: what its screens read, in the language the
/// app chose, after each action a user takes.
@MainActor
@Suite("BioAuthModel end to end over a real socket")
struct ModelEndToEndTests {
    static func model(_ phone: Phone) -> BioAuthModel {
        BioAuthModel(
            api: phone.api,
            authenticator: phone.sensor,
            keyStore: phone.keys,
            store: phone.store,
            clock: phone.clock,
            configuration: .init(language: .simplifiedChinese, deviceName: "测试手机", expectedRelyingPartyID: "bank.example")
        )
    }

    @Test("made synchronously; a refusal is a message and a recovery, never a throw; the offer, 启用, Face ID sign-in")
    func signInStory() async throws {
        try await TestBackend.run { backend in
            let phone = Phone(backend)
            let model = Self.model(phone)
            #expect(!model.isLoaded && model.snapshot == nil)
            await model.loaded()
            #expect(model.snapshot?.state == .signedOut)
            #expect(model.signInButton == nil && model.lockScreen == nil && model.offer == nil)

            // A 5-character password: what to do, in Chinese, and the recovery a screen offers.
            #expect(await model.createAccount(username: "alice", password: "short") == nil)
            #expect(model.message == "密码至少需要 8 位，请设置更长的密码。")
            #expect(model.recovery == .changeInput)
            #expect(model.snapshot?.state == .signedOut)

            #expect(await model.createAccount(username: "alice", password: "correct horse")?.username == "alice")
            #expect(model.message == nil && model.recovery == nil)
            #expect(await model.signIn(username: "alice", password: "correct horse"))
            #expect(model.snapshot?.state == .offeringBiometricSignIn)
            #expect(model.offer?.title == "启用面容 ID 登录？")

            await phone.sensor.script(.match)
            #expect(await model.enableBiometricSignIn())
            #expect(model.snapshot?.state == .unlocked)
            #expect(model.biometricToggle?.isOn == true && model.biometricToggle?.label == "面容 ID 登录")

            #expect(await model.signOut())
            #expect(model.signInButton?.title == "使用面容 ID 登录")

            // The user cancels the prompt: nothing to tell them, and still signed out.
            await phone.sensor.script(.cancel)
            #expect(await model.signInWithBiometrics() == false)
            #expect(model.message == nil && model.lastError != nil)
            #expect(model.snapshot?.state == .signedOut && !model.isBusy)

            await phone.sensor.script(.match)
            #expect(await model.signInWithBiometrics())
            #expect(model.snapshot?.state == .unlocked && model.lastError == nil)
        }
    }

    @Test("changing the PIN from a password session asks for Face ID once, in the action's words; a cancel is a quiet no")
    @MainActor
    func stepUpForThePIN() async throws {
        try await TestBackend.run { backend in
            let phone = Phone(backend)
            let model = Self.model(phone)
            _ = await model.createAccount(username: "alice", password: "correct horse")
            #expect(await model.signIn(username: "alice", password: "correct horse"))
            await phone.sensor.script(.match)
            #expect(await model.enableBiometricSignIn())
            // A new password sign-in on the phone: the key is there, the session's evidence is a password.
            #expect(await model.signOut())
            #expect(await model.signIn(username: "alice", password: "correct horse"))
            let prompts = await phone.sensor.presentedPrompts.count

            await phone.sensor.script(.cancel)
            #expect(await model.setPaymentPIN("258046", currentPassword: "correct horse") == false)
            #expect(model.message == nil && (model.lastError as? BiometricError)?.code == .userCancel, "a cancel says nothing")
            #expect(await phone.sensor.presentedPrompts.last?.reason == "验证面容 ID 以修改支付密码")

            await phone.sensor.script(.match)
            #expect(await model.setPaymentPIN("258046", currentPassword: "correct horse"))
            #expect(model.message == nil)
            #expect(await phone.sensor.presentedPrompts.count == prompts + 2, "one prompt each time")
            // Within its lifetime the step-up, bound to the PIN, counts for the PIN again without a prompt.
            #expect(await model.setPaymentPIN("135792", currentPassword: "correct horse"))
            #expect(await phone.sensor.presentedPrompts.count == prompts + 2, "the step-up still counts for the PIN")
        }
    }

    @Test("a view reading the session is told when an action changes it")
    func observedChanges() async throws {
        try await TestBackend.run { backend in
            let phone = Phone(backend)
            let model = Self.model(phone)
            await model.loaded()
            _ = await model.createAccount(username: "bob", password: "correct horse")

            let changed = Flag()
            withObservationTracking {
                _ = model.snapshot
            } onChange: {
                changed.raise()
            }
            #expect(!changed.isRaised)
            #expect(await model.signIn(username: "bob", password: "correct horse"))
            #expect(changed.isRaised)
        }
    }

    @Test("back after the grace period: the lock screen in Chinese, unlocked with Face ID")
    func lockAndUnlock() async throws {
        try await TestBackend.run { backend in
            let phone = Phone(backend)
            let model = Self.model(phone)
            await model.loaded()
            let lock = try #require(model.appLock)
            // What `.bioAuthLifecycle(model)` feeds it: the scene becomes active.
            _ = try await lock.handle(.willEnterForeground)
            _ = try await lock.handle(.didBecomeActive)
            _ = await model.createAccount(username: "carol", password: "correct horse")
            _ = await model.signIn(username: "carol", password: "correct horse")
            await phone.sensor.script(.match)
            #expect(await model.enableBiometricSignIn())

            _ = try await lock.handle(.willResignActive)
            _ = try await lock.handle(.didEnterBackground)
            phone.clock.advance(by: 600)
            _ = try await lock.handle(.willEnterForeground)
            _ = try await lock.handle(.didBecomeActive)
            await model.refresh()
            #expect(model.lockScreen?.title == "已锁定")

            await phone.sensor.script(.match)
            #expect(await model.unlock())
            #expect(model.snapshot?.state == .unlocked && model.lockScreen == nil)
        }
    }
}

extension ModelEndToEndTests {
    @Test("paying without Face ID while signed in: the payment PIN, never 'sign in with your password'")
    func payWithoutBiometrics() async throws {
        try await TestBackend.run { backend in
            let phone = Phone(backend)
            let model = Self.model(phone)
            await model.loaded()
            _ = await model.createAccount(username: "dave", password: "correct horse")
            _ = await model.signIn(username: "dave", password: "correct horse")
            await phone.sensor.script(.match)
            #expect(await model.enableBiometricSignIn())
            let token = try #require(await model.perform { try await $0.accessToken() })
            let payment = try await phone.api.createPayment(
                amount: Money(minorUnits: 1200, currency: .cny),
                payeeID: "merchant-tea-7",
                payeeName: "Tea House",
                idempotencyKey: "order-1",
                accessToken: token
            )

            // The customer taps "Pay with PIN" in the Face ID prompt.
            await phone.sensor.script(.fallback)
            #expect(await model.pay(payment.id) == nil)
            #expect(model.snapshot?.state == .unlocked)
            #expect(model.message == "如已设置支付密码，请使用支付密码继续。")
            #expect(model.recovery == .usePassword)

            // The device key is gone (a Keychain reset): turn it on again in settings, or the PIN.
            try await phone.keys.deleteKey(tag: try #require(model.snapshot?.biometricSignIn.binding?.keyTag))
            await phone.sensor.script(.match)
            #expect(await model.pay(payment.id) == nil)
            let message = try #require(model.message)
            #expect(!message.contains("密码登录") && !message.contains("使用密码继续"), "\(message)")
            #expect(model.snapshot?.state == .unlocked)
        }
    }
}

/// Raised once from any thread.
final class Flag: Sendable {
    private let raised = Atomic<Bool>(false)
    func raise() { raised.store(true, ordering: .relaxed) }
    var isRaised: Bool { raised.load(ordering: .relaxed) }
}

extension ModelEndToEndTests {
    @Test(
        "the approval sheet: who asks and what in Chinese, three numbers for a sign-in; a wrong pick is a message, the right one approves; 不是我本人 denies"
    )
    func approvalSheet() async throws {
        try await TestBackend.withCallCentre(
            displayName: "客服中心",
            { backend, basic in
                func ask(_ form: String) async throws -> [String: Any] {
                    try await ServicePaymentEndToEndTests.json(backend.server.url, "POST", "/bc-authorize", basic: basic, form: form)
                }

                let phone = Phone(backend)
                let model = Self.model(phone)
                #expect(await model.createAccount(username: "alice", password: "correct horse") != nil)
                #expect(await model.signIn(username: "alice", password: "correct horse"))
                await phone.sensor.script(.match)
                #expect(await model.enableBiometricSignIn())

                let number = try #require(try await ask("scope=openid&login_hint=alice")["match_number"] as? Int)
                #expect(await model.loadApprovals())
                let signIn = try #require(model.pendingApprovals.first)
                let sheet = model.approvalSheet(for: signIn)
                #expect(sheet.title == "在 客服中心 登录？" && sheet.numberPrompt == "请选择另一屏幕上显示的数字。", "\(sheet)")
                #expect(sheet.numberChoices.count == 3 && sheet.numberChoices.contains(number) && sheet.approveButton == nil)
                #expect(sheet.denyButton == "不是我本人")
                let wrong = try #require(sheet.numberChoices.first { $0 != number })
                await phone.sensor.script(.match)
                #expect(await model.approve(signIn, number: wrong) == nil)
                #expect(model.message == "所选数字与显示的不一致，请求已被拒绝。如果是您本人发起的，请重新发起。" && model.recovery == RecoveryAction.none)
                #expect(model.pendingApprovals.isEmpty)

                _ = try await ask("scope=openid&login_hint=alice")
                #expect(await model.loadApprovals())
                let again = try #require(model.pendingApprovals.first)
                // "It wasn't me": no biometric is needed to say no.
                #expect(await model.deny(again))
                #expect(model.message == nil && model.pendingApprovals.isEmpty)

                _ = try await ask(
                    "scope=openid&login_hint=alice&binding_message=%E5%B0%86%E6%AF%8F%E6%97%A5%E8%BD%AC%E8%B4%A6%E9%99%90%E9%A2%9D%E6%8F%90%E9%AB%98%E5%88%B0%C2%A550%2C000"
                )
                #expect(await model.loadApprovals())
                let operation = try #require(model.pendingApprovals.first)
                let operationSheet = model.approvalSheet(for: operation)
                #expect(operationSheet.title == "确认：将每日转账限额提高到¥50,000（由 客服中心 发起）" && operationSheet.approveButton == "使用面容 ID 确认")
                await phone.sensor.script(.match)
                #expect(await model.approve(operation)?.status == "approved")
                #expect(await phone.sensor.presentedPrompts.last?.reason == operationSheet.title, "the prompt says what the sheet said")
            }
        )
    }
}
