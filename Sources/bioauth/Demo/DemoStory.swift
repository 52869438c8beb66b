import AsyncHTTPClient
import BioAuthClient
import BioAuthCore
import BioAuthServer
import BioAuthTesting
import Foundation
import Logging
import OpenAPIRuntime

/// The BioAuth story, told step by step: a server in this process on loopback with a temporary SQLite
/// database, a Face ID phone and a Touch ID phone running the SDK. Every step checks what it tells; a step
/// that deviates is marked and the story goes on.
struct DemoStory {
    let language: Language
    let verbose: Bool

    private var zh: Bool { language == .simplifiedChinese }
    private func t(_ english: String, _ chinese: String) -> String { zh ? chinese : english }

    /// An id as the story shows it: its last 8 characters. A UUIDv7 begins with its timestamp, so the ids of one run
    /// share their first digits; the random end tells them apart.
    static func short(_ id: String) -> String { "…" + id.suffix(8) }

    /// A step did something else than told.
    struct Deviation: Error { let detail: String }

    private func expect(_ condition: Bool, _ detail: @autoclosure () -> String) throws {
        if !condition { throw Deviation(detail: detail()) }
    }

    /// A simulated phone: sensor, keys, secure store, and the SDK.
    final class Phone: @unchecked Sendable {
        let name: String
        let sensor: SimulatedAuthenticator
        let keys: SoftwareDeviceKeyStore
        let store = InMemorySecureStore()
        let api: BioAuthAPI
        let clock = ManualClock()
        let signed = SignedLog()
        let language: Language
        let verbose: Bool
        var flows: BioAuthFlows!

        init(name: String, kind: BiometryKind, server: URL, language: Language, verbose: Bool) {
            self.name = name
            sensor = SimulatedAuthenticator(.init(kind: kind))
            keys = SoftwareDeviceKeyStore(authenticator: sensor)
            api = BioAuthAPI(serverURL: server, middlewares: verbose ? [HTTPTrace(phone: name)] : [])
            self.language = language
            self.verbose = verbose
        }

        /// The app starts (again): new flows over the same stores, as after a relaunch.
        func launch(active: Bool = true) async throws {
            let signed = self.signed
            let verbose = self.verbose
            flows = try await BioAuthFlows(
                api: api,
                authenticator: sensor,
                keyStore: keys,
                store: store,
                clock: clock,
                configuration: .init(
                    language: language,
                    deviceName: name,
                    gracePeriod: 30,
                    expectedRelyingPartyID: DemoStory.relyingPartyID,
                    observer: { event in
                        signed.record(event)
                        if verbose, case .signed(_, let payload, let signature) = event {
                            print(
                                "    ✎ \(payload.purpose) payload \(payload.bytes.count) bytes, counter \(payload.counter): \(payload.bytes.hex.prefix(48))…"
                            )
                            print("      signature \(signature.hex.prefix(32))…")
                        }
                    }
                ),
                isActive: active
            )
        }
    }

    /// The last signature a phone made, for the replay step.
    final class SignedLog: @unchecked Sendable {
        private let lock = NSLock()
        private var last: (challengeID: String, payload: SignedPayload, signature: Data)?
        func record(_ event: FlowEvent) {
            if case .signed(let challengeID, let payload, let signature) = event { lock.withLock { last = (challengeID, payload, signature) } }
        }
        var latest: (challengeID: String, payload: SignedPayload, signature: Data)? { lock.withLock { last } }
    }

    static let relyingPartyID = "bank.example"

    func run() async -> DemoReport {
        var report = DemoReport(language: language)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bioauth-demo-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let server: LoopbackServer
        let receiver: LoopbackWebhookReceiver
        var credentials: ServiceClients.Credentials?
        var callCentre: ServiceClients.Credentials?
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            var configuration = ServerConfiguration()
            configuration.databasePath = folder.appendingPathComponent("bioauth.sqlite").path
            configuration.receiptKeyPath = folder.appendingPathComponent("receipt-key.pem").path
            configuration.pinKeyPath = folder.appendingPathComponent("pin-key").path
            configuration.relyingPartyID = Self.relyingPartyID
            configuration.bcryptCost = 10
            configuration.webhooks.pollInterval = 0.2
            // The bank's webhook receiver listens on this machine: a destination the server refuses unless it is allowed.
            configuration.outbound.allowed = ["127.0.0.1"]
            // Passkeys for the bank's web site (the demo's browser is a software authenticator).
            configuration.passkeys.origins = ["https://" + Self.relyingPartyID]
            // The web sign-in page's QR codes (the demo plays the page over HTTP, with its cookie).
            configuration.passkeys.webPageEnabled = true
            configuration.passkeys.relyingPartyName = "Web Banking"
            var logger = Logger(label: "bioauth-demo")
            logger.logLevel = .error  // --verbose traces the phones' side: their HTTP calls and signatures
            // The bank's webhook receiver, which checks every delivery's signature.
            receiver = try await LoopbackWebhookReceiver.start()
            server = try await LoopbackServer.start(configuration: configuration, logger: logger) { database in
                // The operator makes the backend's credentials (what `bioauth admin service create` does).
                credentials = try await ServiceClients(database: database).create(
                    name: "core-banking",
                    scopes: ["payees:write", "payments:write", "webhooks:write", "sessions:introspect"]
                )
                // The call centre asks customers to approve on their phone (OpenID CIBA), under the name the phone shows.
                let clients = ServiceClients(database: database)
                callCentre = try await clients.create(name: "call-centre", scopes: ["approvals:write"])
                try await clients.setDisplayName(clientID: callCentre!.clientID, to: "Bank Call Centre")
            }
        } catch {
            print(t("The server could not start: \(error)", "服务器无法启动：\(error)"))
            report.record(t("Start the server", "启动服务器"), passed: false, detail: "\(error)")
            return report
        }
        print(
            t(
                "BioAuth server on \(server.url) (temporary SQLite database, relying party \(Self.relyingPartyID)).",
                "BioAuth 服务器运行于 \(server.url)（临时 SQLite 数据库，依赖方 \(Self.relyingPartyID)）。"
            )
        )

        let bank = BankBackend(server: server.url, credentials: credentials!, http: .shared)
        var bankToken = ""

        let face = Phone(
            name: t("Alice's iPhone (Face ID)", "Alice 的 iPhone（面容 ID）"),
            kind: .faceID,
            server: server.url,
            language: language,
            verbose: verbose
        )
        let touch = Phone(
            name: t("Alice's iPad (Touch ID)", "Alice 的 iPad（触控 ID）"),
            kind: .touchID,
            server: server.url,
            language: language,
            verbose: verbose
        )
        let password = "correct horse battery"
        let pin = "258046"

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
        }

        func say(_ english: String, _ chinese: String) { print("  " + t(english, chinese)) }

        // The face phone's prompts are said the moment they show, so that in --verbose they come before the requests
        // they unlock.
        await face.sensor.onPresent { prompt in print("  📱 “\(prompt.reason)”") }

        func failure(_ error: BiometricError, _ kind: BiometryKind) { print("  ⚠︎ \(error.message(in: language, biometry: kind))") }

        await step(t("Register, sign in with the password, and the offer", "注册、密码登录、提示开启")) {
            try await face.launch()
            _ = try await face.flows.createAccount(username: "alice", password: password)
            let offer = try await face.flows.signIn(username: "alice", password: password)
            try expect(offer != nil, "no offer after the password sign-in")
            print("  💬 \(offer!.title)  [\(offer!.enableButton)] [\(offer!.laterButton)]")
            return t("signed in, offer shown", "已登录，已提示开启")
        }

        await step(t("Enable: a key behind Face ID, registered with the server", "启用：创建受面容 ID 保护的密钥并在服务器登记")) {
            await face.sensor.script(.match)
            try await face.flows.enableBiometricSignIn()
            let binding = try await face.flows.snapshot.biometricSignIn.binding.orThrow("no binding")
            say(
                "P-256 key \(binding.publicKey.keyID.hex.prefix(16))… registered as device \(binding.deviceID.map(Self.short) ?? "?"); the server checked its signature.",
                "P-256 密钥 \(binding.publicKey.keyID.hex.prefix(16))… 已登记为设备 \(binding.deviceID.map(Self.short) ?? "?")；服务器已验证其签名。"
            )
            let flags = await face.flows.snapshot.legacyFlags.description
            try expect(flags == "YES | YES | YES", "flags \(flags)")
            return t("Face ID sign-in on", "面容 ID 登录已开启")
        }

        await step(t("Relaunch: locked until Face ID, which waits for the app to be active", "重新启动：应用锁定，待应用进入前台后用面容 ID 解锁")) {
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

        await step(t("Sign out, then sign in with Face ID", "退出登录，再用面容 ID 登录")) {
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

        await step(t("A replayed signature is refused", "重放的签名被拒绝")) {
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

        var coffeeID = ""
        await step(
            t(
                "The bank's backend registers Coffee Shop, subscribes to webhooks and asks Alice for ¥88.00",
                "银行后端登记 Coffee Shop、订阅 Webhook，并请求 Alice 支付 ¥88.00"
            )
        ) {
            bankToken = try await bank.token()
            try await bank.registerPayee("merchant-coffee-042", name: "Coffee Shop", token: bankToken)
            try await bank.registerPayee("merchant-tea-7", name: "Tea House", token: bankToken)
            receiver.trust(secret: try await bank.subscribe(receiver.url, events: ["payment.authorized"], token: bankToken))
            let session = try await bank.introspect(try await face.flows.accessToken(), token: bankToken)
            let account = try (session["sub"] as? String).orThrow("introspection gave no account")
            let methods = (session["amr"] as? [String]) ?? []
            try expect(session["active"] as? Bool == true && methods == ["hwk", "face"], "introspection \(session)")
            say(
                "Service token from POST /oauth/token; Alice's session introspected: signed in with \(methods.joined(separator: " + ")).",
                "通过 POST /oauth/token 获取服务令牌；内省 Alice 的会话：登录方式 \(methods.joined(separator: " + "))。"
            )
            coffeeID = try await bank.requestPayment(
                account: account,
                amountMinor: 8800,
                currency: "CNY",
                payee: "merchant-coffee-042",
                idempotencyKey: "invoice-8800",
                token: bankToken
            )
            say(
                "Payee registered as “Coffee Shop”; payment \(Self.short(coffeeID)) requested (the backend names only the payee's id).",
                "收款方登记为“Coffee Shop”；已请求支付 \(Self.short(coffeeID))（后端只给出收款方编号）。"
            )
            return t("payee registered, webhook subscribed, payment requested", "已登记收款方、已订阅 Webhook、已请求支付")
        }

        var paymentToken = ""
        await step(
            t(
                "Pay ¥88.00 to Coffee Shop with Face ID; the receipt verifies; the bank's webhook arrives",
                "用面容 ID 向 Coffee Shop 支付 ¥88.00；回执验证通过；银行收到 Webhook"
            )
        ) {
            paymentToken = try await face.flows.accessToken()
            try await face.api.setPaymentPIN(pin, currentPassword: password, accessToken: paymentToken)
            let pending = try await face.api.payments(status: "pending", accessToken: paymentToken)
            let coffee = try pending.first { $0.id == coffeeID }.orThrow("the bank's request is not pending on the phone")
            say(
                "The phone lists \(pending.count) pending request: \(PromptCopy(language: language).amount(coffee.amount)) to \(coffee.payeeName).",
                "手机列出 \(pending.count) 笔待支付请求：向 \(coffee.payeeName) 支付 \(PromptCopy(language: language).amount(coffee.amount))。"
            )
            await face.sensor.script(.match)
            let paid = try await face.flows.pay(coffee.id)
            let expected = zh ? "向 Coffee Shop 支付 ¥88.00" : "Pay ¥88.00 to Coffee Shop"
            let shown = await face.sensor.presentedPrompts.last?.reason
            try expect(shown == expected, "the prompt showed \(shown ?? "-")")
            try expect(paid.status == "authorized", "status \(paid.status)")
            say("Authorized. The receipt is signed by the server's key and matches what was shown.", "已授权。回执由服务器密钥签名，与显示内容一致。")
            let event = try await receiver.waitForEvents(1, timeout: .seconds(10)).first.orThrow("no webhook")
            let data = event.json["data"] as? [String: Any] ?? [:]
            try expect(event.verified, "the webhook's signature did not verify")
            try expect(event.eventType == "payment.authorized" && data["paymentId"] as? String == coffee.id, "webhook \(event.eventType)")
            say(
                "🏦 Webhook \(event.eventType) \(Self.short(event.eventID)): BioAuth-Signature verified; \(data["amountMinor"] ?? "?") \(data["currency"] ?? "?") to \(data["payeeName"] ?? "?").",
                "🏦 Webhook \(event.eventType) \(Self.short(event.eventID))：BioAuth-Signature 验证通过；\(data["amountMinor"] ?? "?") \(data["currency"] ?? "?")，收款方 \(data["payeeName"] ?? "?")。"
            )
            return t("authorized once, receipt verified, webhook verified", "已授权，回执已验证，Webhook 已验证")
        }

        await step(
            t(
                "The call centre asks Alice to approve a higher limit on her iPhone; she approves with Face ID; the signed approval verifies",
                "客服中心请求 Alice 在 iPhone 上确认提高限额；她用面容 ID 确认；签名确认书验证通过"
            )
        ) {
            let client = try callCentre.orThrow("no call-centre client")
            let message = t("Raise the daily transfer limit to ¥50,000", "将每日转账限额提高到¥50,000")
            let asked = try await bank.backchannel(client, loginHint: "alice", bindingMessage: message)
            let handle = try (asked["auth_req_id"] as? String).orThrow("no auth_req_id")
            let waiting = try await bank.collect(client, authRequestID: handle)
            guard case .failure(let pending) = waiting, pending.body.contains("authorization_pending") else {
                throw Deviation(detail: "the token endpoint did not say authorization_pending")
            }
            say(
                "🏦 POST /bc-authorize (OpenID CIBA) → auth_req_id; the token endpoint says authorization_pending.",
                "🏦 POST /bc-authorize（OpenID CIBA）→ auth_req_id；令牌端点返回 authorization_pending。"
            )
            let request = try await face.flows.pendingApprovals().first.orThrow("the request is not on the phone")
            await face.sensor.script(.match)
            let approved = try await face.flows.approve(request)
            let expected = zh ? "确认：\(message)（由 Bank Call Centre 发起）" : "Approve: \(message) — asked by Bank Call Centre"
            let shown = await face.sensor.presentedPrompts.last?.reason
            try expect(shown == expected && approved.status == "approved", "the prompt showed \(shown ?? "-")")
            try await Task.sleep(for: .seconds(Double(asked["interval"] as? Int ?? 5)))
            guard case .success(let token) = try await bank.collect(client, authRequestID: handle) else {
                throw Deviation(detail: "the call centre could not collect the approval")
            }
            let signed = try JSONDecoder().decode(
                SignedApproval.self,
                from: JSONSerialization.data(withJSONObject: try (token["signedApproval"] as? [String: Any]).orThrow("no signedApproval"))
            )
            let keys = try await face.api.receiptKeys()
            try expect(keys.contains { signed.isValid(signedBy: $0) } && signed.bindingMessage == message, "the signed approval did not verify")
            say(
                "🏦 The signed approval (\(signed.amr.joined(separator: " + "))) verifies offline with the server's receipt key.",
                "🏦 签名确认书（\(signed.amr.joined(separator: " + "))）用服务器回执公钥离线验证通过。"
            )
            return t("approved on the phone, signed approval verified", "已在手机上确认，签名确认书已验证")
        }

        await step(
            t(
                "Web banking shows a QR code; Alice scans it with her iPhone, picks the page's number, and the page signs in",
                "网上银行显示二维码；Alice 用 iPhone 扫码，选择页面上的数字，网页随即登录"
            )
        ) {
            let page = WebPage(server: server.url)
            let shown = try await page.showQRCode()
            say(
                "🌐 The page shows a QR code (usable once, for 30 s) and the number \(shown.number).",
                "🌐 页面显示二维码（30 秒内可用一次）和数字 \(shown.number)。"
            )
            let request = try await face.flows.openScannedURL(shown.url)
            try expect(request.numberChoices.contains(shown.number), "the phone does not offer the page's number")
            say(
                "📱 “\(PromptCopy(language: language).approvalReason(request.summary))” — pick one: \(request.numberChoices.map(String.init).joined(separator: " "))",
                "📱 “\(PromptCopy(language: language).approvalReason(request.summary))” — 请选择：\(request.numberChoices.map(String.init).joined(separator: " "))"
            )
            await face.sensor.script(.match)
            _ = try await face.flows.approve(request, number: shown.number)
            let state = try await page.poll(shown.id)
            try expect(state == "signed_in", "the page says \(state)")
            let stranger = try await WebPage(server: server.url).poll(shown.id)
            try expect(stranger == "qr_browser_mismatch", "another browser learned \(stranger)")
            say(
                "🌐 The page signs in (approved on the phone); another browser asking about the code learns nothing.",
                "🌐 网页已登录（手机确认）；其他浏览器查询该二维码一无所获。"
            )
            return t("signed in by scanning, browser-bound", "扫码登录成功，且与浏览器绑定")
        }

        await step(
            t(
                "On the web: a passkey made after a password sign-in signs in with no username; it pays nothing",
                "网页端：密码登录后创建通行密钥，之后无需用户名即可登录；通行密钥不能付款"
            )
        ) {
            // Alice's laptop browser; the passkey lives in her password manager (synced, like iCloud Keychain).
            let laptop = SimulatedPasskeyProvider()
            let web = BioAuthAPI(serverURL: server.url)
            let session = try await web.signIn(username: "alice", password: password, installationID: "alice-laptop-browser")
            let creation = try await web.passkeyCreationChallenge(accessToken: session.accessToken)
            let passkey = try await web.registerPasskey(
                challengeID: creation.id,
                try await laptop.register(creation.request),
                name: "Alice's MacBook",
                accessToken: session.accessToken
            )
            try expect(passkey.backupEligible, "the passkey is not a synced one")
            say(
                "Passkey \(Self.short(passkey.id)) registered; its user handle is \(creation.request.userID.count) random bytes, not the account id.",
                "通行密钥 \(Self.short(passkey.id)) 已登记；其用户句柄是 \(creation.request.userID.count) 个随机字节，而非账户编号。"
            )
            try await web.signOut(accessToken: session.accessToken)
            let challenge = try await web.passkeySignInChallenge()
            try expect(challenge.request.allowedCredentialIDs.isEmpty, "the sign-in named credentials")
            let tokens = try await web.signInWithPasskey(
                challengeID: challenge.id,
                try await laptop.assert(challenge.request),
                installationID: "alice-laptop-browser"
            )
            let introspected = try await bank.introspect(tokens.accessToken, token: bankToken)
            let methods = (introspected["amr"] as? [String]) ?? []
            try expect(methods == ["swk", "user"], "introspection \(introspected)")
            say(
                "Signed in with the passkey, no username typed; the bank sees \(methods.joined(separator: " + ")) (a synced key, user verified).",
                "凭通行密钥登录，无需输入用户名；银行看到 \(methods.joined(separator: " + "))（已同步的密钥，已验证用户）。"
            )
            let tea = try await web.createPayment(
                amount: Money(minorUnits: 600, currency: .cny),
                payeeID: "merchant-tea-7",
                idempotencyKey: "web-600",
                accessToken: tokens.accessToken
            )
            try expect(tea.status == "pending", "the web's payment is \(tea.status)")
            say(
                "A ¥6.00 payment started on the web waits for the phone: only its Face ID key (or the PIN) authorizes it.",
                "网页端发起的 ¥6.00 付款等待手机确认：只有手机的面容 ID 密钥（或支付密码）能授权。"
            )
            return t("passkey sign-in, amr swk + user; payments stay on the phone", "通行密钥登录，amr 为 swk + user；付款仍在手机上确认")
        }

        await step(t("Five non-matching faces lock Face ID; the passcode turns it back on", "五次面容不匹配导致锁定；输入设备密码后恢复")) {
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

        await step(t("Face ID fails at the till: the payment PIN pays", "付款时面容 ID 失败：使用支付密码付款")) {
            let token = try await face.flows.accessToken()
            let tea = try await face.api.createPayment(
                amount: Money(minorUnits: 1200, currency: .cny),
                payeeID: "merchant-tea-7",
                idempotencyKey: "order-1200",
                accessToken: token
            )
            await face.sensor.script(.fallback)
            do {
                _ = try await face.flows.pay(tea.id)
                throw Deviation(detail: "Face ID paid although the user chose the PIN")
            } catch let error as BiometricError {
                try expect(error.code == .userFallback, "error \(error.code)")
            }
            say("The user tapped “\(zh ? "使用支付密码" : "Pay with PIN")” and entered the PIN; only the server checks it.", "用户点击“使用支付密码”并输入密码；只有服务器校验。")
            let paid = try await face.flows.pay(tea.id, pin: pin)
            try expect(paid.status == "authorized" && paid.authorizationMethod == "pin", "status \(paid.status)")
            return t("¥12.00 paid with the PIN", "已用支付密码支付 ¥12.00")
        }

        await step(t("A face is added in Settings: Face ID sign-in turns off; password, then on again", "在“设置”中添加面容：面容 ID 登录关闭；密码登录后重新开启")) {
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
            await face.sensor.script(.match)
            try await face.flows.enableBiometricSignIn()
            say("Signed in with the password and turned Face ID sign-in on again with a new key.", "已用密码登录，并用新密钥重新开启面容 ID 登录。")
            return t("off with its reason, then on again", "显示原因后关闭，再重新开启")
        }

        await step(t("The iPad is revoked from the iPhone: its Touch ID sign-in is refused", "在 iPhone 上撤销 iPad：iPad 的触控 ID 登录被拒绝")) {
            try await touch.launch()
            let offer = try await touch.flows.signIn(username: "alice", password: password)
            try expect(offer?.title == (zh ? "启用触控 ID 登录？" : "Sign in with Touch ID?"), "offer \(offer?.title ?? "none")")
            await touch.sensor.script(.match)
            try await touch.flows.enableBiometricSignIn()
            try await touch.flows.signOut()
            let token = try await face.flows.accessToken()
            let devices = try await face.api.devices(accessToken: token)
            let ipad = try devices.first { $0.biometryKind == .touchID && $0.revokedAt == nil }.orThrow("the iPad is not listed")
            try await face.api.revokeDevice(ipad.id, accessToken: token)
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

        await server.stop()
        await receiver.stop()
        return report
    }
}

extension Optional {
    /// The value, or a deviation saying `detail`.
    fileprivate func orThrow(_ detail: String) throws -> Wrapped {
        guard let self else { throw DemoStory.Deviation(detail: detail) }
        return self
    }
}

extension Data {
    fileprivate var hex: String { map { String(format: "%02x", $0) }.joined() }
}
