import BioAuthClient
import BioAuthCore
import BioAuthTesting
import Foundation

/// The on-device half of the BioAuth story, on a simulated Face ID phone and a Touch ID phone with nothing
/// enrolled. Every step checks what it tells; a deviation fails the step instead of stopping the story.
struct DeviceStory {
    let language: Language
    let verbose: Bool

    private var zh: Bool { language == .simplifiedChinese }
    private func t(_ english: String, _ chinese: String) -> String { zh ? chinese : english }

    /// A step failed: what was expected and what happened.
    struct Deviation: Error { let detail: String }

    private func expect(_ condition: Bool, _ detail: @autoclosure () -> String) throws {
        if !condition { throw Deviation(detail: detail()) }
    }

    func run() async -> DemoReport {
        var report = DemoReport(language: language)
        let clock = ManualClock()
        let sensor = SimulatedAuthenticator(.init(kind: .faceID), clock: clock)
        let keys = SoftwareDeviceKeyStore(authenticator: sensor)
        let store = InMemorySecureStore()
        let copy = PromptCopy(language: language)
        let account = "alice"
        var session: SessionMachine?
        var appLock: AppLock?

        func launch(active: Bool) async throws {
            let machine = try await SessionMachine(store: store, keyStore: keys)
            session = machine
            appLock = AppLock(
                session: machine, authenticator: sensor, keyStore: keys, clock: clock,
                configuration: .init(gracePeriod: 30, language: language), isActive: active)
        }

        func step(_ title: String, _ body: () async throws -> String) async {
            print("\n▶ \(title)")
            do {
                let detail = try await body()
                report.record(title, passed: true, detail: detail)
            } catch let deviation as Deviation {
                print("  ✗ \(deviation.detail)")
                report.record(title, passed: false, detail: deviation.detail)
            } catch {
                print("  ✗ \(error)")
                report.record(title, passed: false, detail: "\(error)")
            }
            if verbose, let session {
                print("  · flags loginState | startAutoLoginState | isAppCurrentLoginState = \(await session.snapshot.legacyFlags)")
            }
        }

        func showPrompt() async {
            guard let prompt = await sensor.presentedPrompts.last else { return }
            print("  📱 “\(prompt.reason)”" + (verbose ? "  [\(prompt.fallbackTitle ?? "-") | \(prompt.cancelTitle ?? "-")]" : ""))
        }

        await step(t("A Face ID phone starts the app for the first time", "一台面容 ID 手机首次打开应用")) {
            try await launch(active: true)
            let availability = await sensor.availability(for: .biometrics)
            try expect(availability == .available(.faceID), "availability: \(availability)")
            let state = await session!.state
            try expect(state == .signedOut, "state: \(state)")
            print("  " + t("Face ID is available. Nobody is signed in.", "面容 ID 可用，尚未登录。"))
            return t("signed out, Face ID available", "未登录，面容 ID 可用")
        }

        await step(t("Password sign-in, then the offer", "密码登录，然后提示开启")) {
            print("  " + t("(The server that checks the password is not built yet; the phone records a successful sign-in.)",
                           "（校验密码的服务器尚未实现；手机记录一次成功的密码登录。）"))
            try await session!.handle(.passwordSignInSucceeded(accountID: account, canOfferBiometricSignIn: true))
            let offer = copy.offer(biometry: .faceID)
            print("  💬 \(offer.title)  [\(offer.enableButton)] [\(offer.laterButton)]")
            let state = await session!.state
            try expect(state == .offeringBiometricSignIn, "state: \(state)")
            return t("offer shown", "已提示开启")
        }

        await step(t("The user taps \(copy.offer(biometry: .faceID).enableButton): a key behind Face ID", "用户点击“启用”：创建受面容 ID 保护的密钥")) {
            await sensor.script(.match)
            let context = try await sensor.evaluate(copy.prompt(for: .enableBiometricSignIn, biometry: .faceID))
            await showPrompt()
            let publicKey = try await keys.createKey(tag: "signin")
            let proof = Data("bioauth.demo.enable".utf8)
            let signature = try await keys.sign(proof, tag: "signin", context: context)
            try expect(publicKey.isValidSignature(signature, for: proof), "the new key's signature does not verify")
            let binding = DeviceBinding(
                accountID: account, keyTag: "signin", publicKey: publicKey, biometry: .faceID, enabledAt: clock.now)
            try await session!.handle(.biometricSignInEnabled(binding))
            let keyID = publicKey.keyID.prefix(8).map { String(format: "%02x", $0) }.joined()
            print("  " + t("P-256 key created; key id \(keyID)…; it signs only after a Face ID match.",
                           "已创建 P-256 密钥，密钥 ID \(keyID)…；只有面容 ID 匹配后才能签名。"))
            let flags = await session!.snapshot.legacyFlags.description
            try expect(flags == "YES | YES | YES", "flags: \(flags)")
            return t("biometric sign-in on", "已开启面容 ID 登录")
        }

        await step(t("Relaunch: the app is locked and waits until it is active", "重新启动：应用已锁定，等待应用进入前台")) {
            await sensor.setAppActive(false)
            try await launch(active: false)
            let state = await session!.state
            try expect(state == .locked, "state after relaunch: \(state)")
            let shownBefore = await sensor.presentedPrompts.count
            let unlocking = Task { [appLock] in try await appLock!.unlock() }
            for _ in 0..<50 { await Task.yield() }
            let shownWhileInactive = await sensor.presentedPrompts.count
            print("  " + t("Unlock requested while the app is still launching: no prompt yet (no -1004).",
                           "应用仍在启动时请求解锁：暂不弹出验证（避免 -1004）。"))
            await sensor.setAppActive(true)
            await appLock!.didBecomeActive()
            while !(await sensor.isPromptVisible) { await Task.yield() }
            await showPrompt()
            await sensor.perform(.match)
            let unlocked = try await unlocking.value
            try expect(shownWhileInactive == shownBefore, "a prompt was shown while inactive")
            try expect(unlocked == .unlocked, "state: \(unlocked)")
            print("  " + t("Face matched; the device key signed a fresh nonce and the signature verified. Unlocked.",
                           "面容匹配；设备密钥对随机数签名且验证通过。已解锁。"))
            return t("locked → unlocked by a key signature", "锁定 → 凭密钥签名解锁")
        }

        await step(t("Back from the background: 10 s stays unlocked, 45 s locks", "从后台返回：10 秒内保持解锁，45 秒后锁定")) {
            await appLock!.didEnterBackground()
            clock.advance(by: 10)
            let short = try await appLock!.willEnterForeground()
            await appLock!.didBecomeActive()
            await appLock!.didEnterBackground()
            clock.advance(by: 45)
            let long = try await appLock!.willEnterForeground()
            await appLock!.didBecomeActive()
            try expect(short == .unlocked && long == .locked, "after 10 s: \(short), after 45 s: \(long)")
            await sensor.script(.match)
            let state = try await appLock!.unlock()
            await showPrompt()
            try expect(state == .unlocked, "state: \(state)")
            return t("grace period 30 s", "宽限期 30 秒")
        }

        await step(t("A payment prompt shows exactly what is signed", "支付验证显示的正是被签名的内容")) {
            let payment = PaymentSummary(amount: Money(minorUnits: 8800, currency: .cny), payeeName: "Coffee Shop")
            await sensor.script(.match)
            let context = try await sensor.evaluate(copy.prompt(for: .authorizePayment(payment), biometry: .faceID))
            await showPrompt()
            let expected = zh ? "向 Coffee Shop 支付 ¥88.00" : "Pay ¥88.00 to Coffee Shop"
            try expect(await sensor.presentedPrompts.last?.reason == expected, "prompt text differs")
            let signed = Data("CNY 8800 Coffee Shop".utf8)
            let signature = try await keys.sign(signed, tag: "signin", context: context)
            let binding = await session!.snapshot.biometricSignIn.binding!
            let verifies = binding.publicKey.isValidSignature(signature, for: signed)
            let tampered = binding.publicKey.isValidSignature(signature, for: Data("CNY 9900 Coffee Shop".utf8))
            try expect(verifies && !tampered, "signature check: original \(verifies), tampered \(tampered)")
            print("  " + t("Signed 8800 fen to Coffee Shop; the same signature over 9900 fen does not verify.",
                           "已对“8800 分给 Coffee Shop”签名；同一签名对 9900 分验证失败。"))
            print("  " + t("(Server-side payments — challenge, exactly-once authorization, receipt — are not built yet.)",
                           "（服务器端支付——挑战、仅一次授权、回执——尚未实现。）"))
            return t("amount and payee in the prompt and the signature", "金额与收款方出现在验证提示和签名中")
        }

        await step(t("Five non-matching faces lock Face ID; the passcode turns it back on", "五次面容不匹配导致锁定；输入设备密码后恢复")) {
            try await launch(active: true)
            await sensor.script(.nonMatch, .nonMatch, .nonMatch)
            var messages: [String] = []
            do { _ = try await appLock!.unlock() } catch let error as BiometricError {
                messages.append(error.message(in: language, biometry: .faceID))
                try expect(error.code == .authenticationFailed, "first prompt: \(error.code)")
            }
            await sensor.script(.nonMatch, .nonMatch)
            do { _ = try await appLock!.unlock() } catch let error as BiometricError {
                messages.append(error.message(in: language, biometry: .faceID))
                try expect(error.code == .biometryLockout && error.recovery == .enterPasscode, "second prompt: \(error.code)")
            }
            for message in messages { print("  ⚠︎ \(message)") }
            try expect(messages.count == 2, "expected two failures")
            await sensor.script(.passcode)
            try await appLock!.recoverFromLockout()
            await showPrompt()
            await sensor.script(.match)
            let state = try await appLock!.unlock()
            try expect(state == .unlocked, "state: \(state)")
            print("  " + t("Passcode accepted; Face ID matched again. Unlocked.", "设备密码正确；面容 ID 再次匹配。已解锁。"))
            return t("-1, -8, passcode, unlocked", "-1、-8、设备密码、已解锁")
        }

        await step(t("A face is added in Settings: the key is invalidated", "在“设置”中添加了面容：密钥失效")) {
            await sensor.changeEnrollment()
            await appLock!.didEnterBackground()
            clock.advance(by: 120)
            _ = try await appLock!.willEnterForeground()
            await appLock!.didBecomeActive()
            do {
                _ = try await appLock!.unlock()
                throw Deviation(detail: "the old key still unlocked the app")
            } catch let error as BiometricError {
                print("  ⚠︎ \(error.message(in: language, biometry: .faceID))")
                try expect(error.code == .keyInvalidated, "error: \(error.code)")
            }
            let snapshot = await session!.snapshot
            let keyState = await keys.keyState(tag: "signin")
            try expect(snapshot.state == .signedOut, "state: \(snapshot.state)")
            try expect(snapshot.biometricSignIn == .turnedOff(reason: .enrollmentChanged), "status: \(snapshot.biometricSignIn)")
            try expect(keyState == .absent, "key: \(keyState)")
            try await session!.handle(.passwordSignInSucceeded(accountID: account, canOfferBiometricSignIn: true))
            let state = await session!.state
            try expect(state == .offeringBiometricSignIn, "after password: \(state)")
            print("  " + t("Signed in with the password; the offer to turn Face ID sign-in on again is back.",
                           "已用密码登录；重新开启面容 ID 登录的提示再次出现。"))
            return t("turned off, key deleted, password, offer again", "已关闭、密钥已删除、密码登录、再次提示")
        }

        await step(t("A Touch ID phone with no finger enrolled is never offered", "未录入指纹的触控 ID 手机不会被提示开启")) {
            let touch = SimulatedAuthenticator(.init(kind: .touchID, enrolled: false))
            let availability = await touch.availability(for: .biometrics)
            guard case .unavailable(let error) = availability else { throw Deviation(detail: "available without a finger") }
            print("  ⚠︎ \(error.message(in: language, biometry: .touchID))")
            let other = try await SessionMachine(store: InMemorySecureStore(), keyStore: SoftwareDeviceKeyStore(authenticator: touch))
            try await other.handle(.passwordSignInSucceeded(accountID: "bob", canOfferBiometricSignIn: availability.isAvailable))
            let state = await other.state
            try expect(error.code == .biometryNotEnrolled && error.recovery == .openSettingsToEnroll, "error: \(error.code)")
            try expect(state == .unlocked, "state: \(state)")
            return t("-7, open Settings; signed in without an offer", "-7，前往设置；直接登录不提示")
        }

        return report
    }
}
