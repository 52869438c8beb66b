import BioAuthClient
import BioAuthCore
import BioAuthServer
import BioAuthTesting
import Foundation

/// The phone's own steps: enabling Face ID, the app lock, sign-in, and what turns it off.
extension DemoStory {
    /// Account, password sign-in, and the offer to turn Face ID on.
    func registerAndOffer(_ stage: DemoStage) async throws -> String {
        let (face, password) = (stage.face, stage.password)
        try await face.launch()
        _ = try await face.flows.createAccount(username: "alice", password: password)
        let offer = try await face.flows.signIn(username: "alice", password: password)
        try expect(offer != nil, "no offer after the password sign-in")
        print("  💬 \(offer!.title)  [\(offer!.enableButton)] [\(offer!.laterButton)]")
        return t("signed in, offer shown", "已登录，已提示开启")

    }

    /// A key behind Face ID, registered with the server.
    func enableFaceID(_ stage: DemoStage) async throws -> String {
        let face = stage.face
        let code = try await stage.bank.bindingCode(for: "alice", token: try await stage.bank.token())
        say(
            "The branch checked Alice's ID and gave her a one-time binding code: \(code.prefix(5))-…",
            "网点核验了 Alice 的身份，并交给她一次性绑定码：\(code.prefix(5))-…"
        )
        await face.sensor.script(.match)
        try await face.flows.enableBiometricSignIn(bindingCode: code)
        let binding = try await face.flows.snapshot.biometricSignIn.binding.orThrow("no binding")
        say(
            "P-256 key \(binding.publicKey.keyID.hex.prefix(16))… registered as device \(binding.deviceID.map(Self.short) ?? "?"); the server checked its signature.",
            "P-256 密钥 \(binding.publicKey.keyID.hex.prefix(16))… 已登记为设备 \(binding.deviceID.map(Self.short) ?? "?")；服务器已验证其签名。"
        )
        let flags = await face.flows.snapshot.legacyFlags.description
        try expect(flags == "YES | YES | YES", "flags \(flags)")
        return t("Face ID sign-in on", "面容 ID 登录已开启")

    }

    /// A relaunch locks the app; Face ID waits for it to be active; 45 s away locks it again.
    func relaunchLocked(_ stage: DemoStage) async throws -> String {
        let face = stage.face
        await face.sensor.setAppActive(false)
        try await face.launch(active: false)
        let locked = await face.flows.snapshot.state
        try expect(locked == .locked, "state after relaunch: \(locked)")
        let before = await face.sensor.presentedPrompts.count
        let flows = face.flows!
        let unlocking = Task { try await flows.unlock() }
        for _ in 0..<50 { await Task.yield() }
        let early = await face.sensor.presentedPrompts.count
        say("Locked. Unlock requested while the app is still launching: no prompt yet (no -1004).", "已锁定。应用仍在启动时请求解锁：暂不弹出验证（避免 -1004）。")
        await face.sensor.setAppActive(true)
        await face.flows.appLock.didBecomeActive()
        while !(await face.sensor.isPromptVisible) { await Task.yield() }
        await face.sensor.perform(.match)
        let state = try await unlocking.value
        try expect(early == before, "a prompt was shown while the app was inactive")
        try expect(state == .unlocked, "state \(state)")
        await face.flows.appLock.didEnterBackground()
        face.clock.advance(by: 45)
        let away = try await face.flows.appLock.willEnterForeground()
        await face.flows.appLock.didBecomeActive()
        await face.sensor.script(.match)
        let again = try await face.flows.unlock()
        try expect(away == .locked && again == .unlocked, "after 45 s away: \(away), then \(again)")
        say("Unlocked by a key signature; 45 s in the background locked it again (grace 30 s).", "凭密钥签名解锁；在后台 45 秒后再次锁定（宽限期 30 秒）。")
        return t("locked → unlocked", "锁定 → 解锁")

    }

    /// Signed out, then signed in with Face ID over a server challenge.
    func signOutThenFaceID(_ stage: DemoStage) async throws -> String {
        let face = stage.face
        try await face.flows.signOut()
        let offered = await face.flows.snapshot.canSignInWithBiometrics
        try expect(offered, "Sign in with Face ID is not offered after signing out")
        say("Signed out; “Sign in with Face ID” is still offered.", "已退出；仍提供“使用面容 ID 登录”。")
        await face.sensor.script(.match)
        try await face.flows.signInWithBiometrics()
        let state = await face.flows.snapshot.state
        try expect(state == .unlocked, "state \(state)")
        say("The server verified the login signature and counter, and opened a session.", "服务器验证了登录签名与计数器，并建立了会话。")
        return t("signed in with a server challenge", "凭服务器挑战登录")

    }

    /// The last signature sent again is refused.
    func replayRefused(_ stage: DemoStage) async throws -> String {
        let face = stage.face
        let captured = try face.signed.latest.orThrow("no signature to replay")
        do {
            _ = try await face.api.signInWithBiometrics(
                challengeID: captured.challengeID,
                keyID: captured.payload.keyID,
                counter: captured.payload.counter,
                signature: captured.signature
            )
            throw Deviation(detail: "the replay was accepted")
        } catch let problem as APIProblem {
            say(
                "Sent the same signed login again: \(problem.code) (\(problem.status ?? 0)).",
                "再次发送同一签名：\(problem.code)（\(problem.status ?? 0)）。"
            )
            try expect(problem.code == .challengeUsed, "refused with \(problem.code)")
        }
        return "challenge_used"

    }

    /// Five non-matches lock Face ID; the passcode recovers it.
    func lockoutAndPasscode(_ stage: DemoStage) async throws -> String {
        let face = stage.face
        try await face.launch()
        await face.sensor.script(.nonMatch, .nonMatch, .nonMatch)
        do { _ = try await face.flows.unlock() } catch let error as BiometricError {
            failure(error, .faceID)
            try expect(error.code == .authenticationFailed, "first prompt: \(error.code)")
        }
        await face.sensor.script(.nonMatch, .nonMatch)
        do { _ = try await face.flows.unlock() } catch let error as BiometricError {
            failure(error, .faceID)
            try expect(error.code == .biometryLockout, "second prompt: \(error.code)")
        }
        await face.sensor.script(.passcode)
        try await face.flows.recoverFromLockout()
        await face.sensor.script(.match)
        let state = try await face.flows.unlock()
        try expect(state == .unlocked, "state \(state)")
        say("Passcode accepted; Face ID matched again.", "设备密码正确；面容 ID 再次匹配。")
        return t("-1, -8, passcode, unlocked", "-1、-8、设备密码、已解锁")

    }

    /// A changed enrollment turns Face ID sign-in off; the password and a new key turn it on.
    func enrollmentChanged(_ stage: DemoStage) async throws -> String {
        let (face, password) = (stage.face, stage.password)
        try await face.flows.signOut()
        await face.sensor.changeEnrollment()
        do {
            try await face.flows.signInWithBiometrics()
            throw Deviation(detail: "the old key still signed in")
        } catch let error as BiometricError {
            failure(error, .faceID)
            try expect(error.code == .keyInvalidated, "error \(error.code)")
        }
        let status = await face.flows.snapshot.biometricSignIn
        try expect(status == .turnedOff(reason: .enrollmentChanged), "status \(status)")
        print("  ℹ︎ \(BiometricSignInOffReason.enrollmentChanged.message(in: language, biometry: .faceID))")
        let offer = try await face.flows.signIn(username: "alice", password: password)
        try expect(offer != nil, "no offer after the password")
        // The old key's device is still bound, and a password session cannot revoke it (a thief's could not either): the
        // password alone turns nothing on.
        await face.sensor.script(.match)
        do {
            try await face.flows.enableBiometricSignIn()
            throw Deviation(detail: "the password alone bound a new key beside the old one")
        } catch let problem as APIProblem {
            print("  ⚠︎ \(problem.message(in: language)) (\(problem.code))")
            try expect(problem.code == .deviceBindingRequired, "refused with \(problem.code)")
        }
        let code = try await stage.bank.bindingCode(for: "alice", token: try await stage.bank.token())
        await face.sensor.script(.match)
        try await face.flows.enableBiometricSignIn(bindingCode: code)
        say(
            "The bank checked Alice again and gave her a code; Face ID sign-in is on with a new key, and the old key's device is revoked.",
            "银行再次核验 Alice 并给她一个绑定码；面容 ID 登录已用新密钥开启，旧密钥的设备已撤销。"
        )
        let devices = try await face.api.devices(accessToken: try await face.flows.accessToken())
        let live = devices.filter { $0.revokedAt == nil && $0.biometryKind == .faceID }
        try expect(live.count == 1 && live[0].boundBy == "binding_code", "live Face ID devices: \(live.map(\.boundBy))")
        return t("off with its reason; the password alone refused; on again with the bank's code", "显示原因后关闭；仅凭密码被拒绝；凭银行的绑定码重新开启")

    }

    /// A thief with Alice's password on their own phone: turning Face ID sign-in on is refused, and the request to bind it
    /// reaches Alice's iPhone, where she denies it (the thief cannot answer it: only a bound device can).
    func phishedPassword(_ stage: DemoStage) async throws -> String {
        let (face, thief, password) = (stage.face, stage.thief, stage.password)
        try await thief.launch()
        _ = try await thief.flows.signIn(username: "alice", password: password)
        await thief.sensor.script(.match)
        do {
            try await thief.flows.enableBiometricSignIn()
            throw Deviation(detail: "the thief's phone was bound by the password alone")
        } catch let problem as APIProblem {
            print("  ⚠︎ \(problem.message(in: language)) (\(problem.code))")
            try expect(problem.code == .deviceBindingRequired, "refused with \(problem.code)")
        }
        await thief.sensor.script(.match)
        let pending = try await thief.flows.requestDeviceBinding()
        let request = try await face.flows.pendingApprovals().first { $0.kind == .bindDevice }.orThrow("the iPhone has no binding request")
        print("  📱 \(PromptCopy(language: language).approvalReason(request.summary))  \(request.numberChoices)")
        _ = try await face.flows.deny(request.id)
        say("Alice did not ask for this: she taps “It wasn't me”.", "这不是 Alice 发起的：她点击“不是我本人”。")
        do {
            try await thief.flows.completeDeviceBinding(pending, pollInterval: .milliseconds(100))
            throw Deviation(detail: "the denied request bound the thief's phone")
        } catch let problem as APIProblem {
            try expect(problem.code == .accessDenied, "ended with \(problem.code)")
        }
        return t("device_binding_required; the request denied on the iPhone", "device_binding_required；绑定请求已在 iPhone 上拒绝")
    }

    /// Alice loses her iPhone: the bank checks her identity at the branch and asks for a recovery code, which binds her
    /// new iPhone and ends everything else of her account at once.
    func lostPhone(_ stage: DemoStage) async throws -> String {
        let (old, replacement, password) = (stage.face, stage.replacement, stage.password)
        let oldKey = try await old.flows.snapshot.biometricSignIn.binding.orThrow("the old iPhone is not bound").publicKey.keyID
        let before = stage.receiver.acceptedEvents.count
        let code = try await stage.bank.bindingCode(for: "alice", recovery: true, token: try await stage.bank.token())
        say("The branch checked Alice's ID and gave her a recovery code.", "网点核验了 Alice 的身份，并交给她恢复码。")
        try await replacement.launch()
        _ = try await replacement.flows.signIn(username: "alice", password: password)
        await replacement.sensor.script(.match)
        try await replacement.flows.enableBiometricSignIn(bindingCode: code)
        do {
            _ = try await old.api.signInChallenge(keyID: oldKey)
            throw Deviation(detail: "the lost iPhone's key was still accepted")
        } catch let problem as APIProblem {
            print("  ⚠︎ \(problem.message(in: language)) (\(problem.code))")
            try expect(problem.code == .deviceRevoked, "the lost iPhone's key: \(problem.code)")
        }
        let events = try await stage.receiver.waitForEvents(before + 1, timeout: .seconds(10))
        let event = try events.last { $0.eventType == "account.recovered" }.orThrow("no account.recovered webhook")
        try expect(event.verified, "the webhook's signature did not verify")
        say(
            "🏦 Webhook account.recovered \(Self.short(event.eventID)): BioAuth-Signature verified; every other device, passkey and session ended.",
            "🏦 Webhook account.recovered \(Self.short(event.eventID))：BioAuth-Signature 验证通过；其他设备、通行密钥和会话均已失效。"
        )
        return t(
            "new iPhone bound; the lost one device_revoked; account.recovered verified",
            "新 iPhone 已绑定；丢失的手机 device_revoked；account.recovered 已验证"
        )
    }

    /// The iPad revoked from the iPhone: its key is refused and its sign-in turns off.
    func revokeIPad(_ stage: DemoStage) async throws -> String {
        let (face, touch, password) = (stage.face, stage.touch, stage.password)
        try await touch.launch()
        let offer = try await touch.flows.signIn(username: "alice", password: password)
        try expect(offer?.title == (zh ? "启用触控 ID 登录？" : "Sign in with Touch ID?"), "offer \(offer?.title ?? "none")")
        // The iPhone is bound: the iPad binds only when the iPhone approves it, with the number the iPad shows.
        await touch.sensor.script(.match)
        let pending = try await touch.flows.requestDeviceBinding()
        say("The iPad shows \(pending.matchNumber).", "iPad 显示 \(pending.matchNumber)。")
        let request = try await face.flows.pendingApprovals().first { $0.kind == .bindDevice }.orThrow("the iPhone has no binding request")
        print("  📱 \(PromptCopy(language: language).approvalReason(request.summary))  \(request.numberChoices)")
        await face.sensor.script(.match)
        _ = try await face.flows.approve(request, number: pending.matchNumber)
        try await touch.flows.completeDeviceBinding(pending, pollInterval: .milliseconds(100))
        try await touch.flows.signOut()
        let token = try await face.flows.accessToken()
        let devices = try await face.api.devices(accessToken: token)
        let ipad = try devices.first { $0.biometryKind == .touchID && $0.revokedAt == nil }.orThrow("the iPad is not listed")
        // Revoking another device is sensitive: one Face ID prompt steps the iPhone's session up for it.
        await face.sensor.script(.match)
        try await face.flows.stepUp(for: .revokeDevice)
        try await face.flows.revokeDevice(ipad.id)
        say("The iPhone lists \(devices.count) devices and revokes “\(ipad.name)”.", "iPhone 列出 \(devices.count) 台设备并撤销“\(ipad.name)”。")
        do {
            try await touch.flows.signInWithBiometrics()
            throw Deviation(detail: "the revoked iPad signed in")
        } catch let problem as APIProblem {
            print("  ⚠︎ \(problem.message(in: language)) (\(problem.code))")
            try expect(problem.code == .deviceRevoked, "refused with \(problem.code)")
        }
        let status = await touch.flows.snapshot.biometricSignIn
        try expect(status == .turnedOff(reason: .deviceRevoked), "iPad status \(status)")
        print("  ℹ︎ \(BiometricSignInOffReason.deviceRevoked.message(in: language, biometry: .touchID))")
        return t("device_revoked; turned off on the iPad", "device_revoked；iPad 上已关闭")

    }
}
