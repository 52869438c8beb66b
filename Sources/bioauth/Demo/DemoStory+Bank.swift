import BioAuthClient
import BioAuthCore
import BioAuthServer
import BioAuthTesting
import Foundation

/// The bank's steps: its backend asks for a payment, the phone pays it (Face ID or the PIN), the call centre asks for an approval.
extension DemoStory {
    /// The backend registers payees, subscribes to webhooks and asks for a payment.
    func bankRequestsPayment(_ stage: DemoStage) async throws -> String {
        let (face, bank, receiver) = (stage.face, stage.bank, stage.receiver)
        stage.bankToken = try await bank.token()
        try await bank.registerPayee("merchant-coffee-042", name: "Coffee Shop", token: stage.bankToken)
        try await bank.registerPayee("merchant-tea-7", name: "Tea House", token: stage.bankToken)
        receiver.trust(secret: try await bank.subscribe(receiver.url, events: ["payment.authorized", "account.recovered"], token: stage.bankToken))
        let session = try await bank.introspect(try await face.flows.accessToken(), token: stage.bankToken)
        let account = try (session["sub"] as? String).orThrow("introspection gave no account")
        let methods = (session["amr"] as? [String]) ?? []
        try expect(session["active"] as? Bool == true && methods == ["hwk", "face"], "introspection \(session)")
        say(
            "Service token from POST /oauth/token; Alice's session introspected: signed in with \(methods.joined(separator: " + ")).",
            "通过 POST /oauth/token 获取服务令牌；内省 Alice 的会话：登录方式 \(methods.joined(separator: " + "))。"
        )
        stage.coffeeID = try await bank.requestPayment(
            account: account,
            amountMinor: 8800,
            currency: "CNY",
            payee: "merchant-coffee-042",
            idempotencyKey: "invoice-8800",
            token: stage.bankToken
        )
        say(
            "Payee registered as “Coffee Shop”; payment \(Self.short(stage.coffeeID)) requested (the backend names only the payee's id).",
            "收款方登记为“Coffee Shop”；已请求支付 \(Self.short(stage.coffeeID))（后端只给出收款方编号）。"
        )
        return t("payee registered, webhook subscribed, payment requested", "已登记收款方、已订阅 Webhook、已请求支付")

    }

    /// Changing the PIN from a password session: the server asks for a step-up, and the flows answer it with one prompt that
    /// names the action.
    func changePINAsksForFaceID(_ stage: DemoStage) async throws -> String {
        let (face, password, pin) = (stage.face, stage.password, stage.pin)
        try await face.flows.signOut()
        _ = try await face.flows.signIn(username: "alice", password: password)
        do {
            try await face.api.setPaymentPIN(pin, currentPassword: password, accessToken: try await face.flows.accessToken())
            throw Deviation(detail: "a password session changed the PIN")
        } catch let problem as APIProblem {
            print("  ⚠︎ \(problem.code): \(problem.stepUp.map { "\($0.acrValues), max_age=\($0.maxAge ?? 0)" } ?? "-")")
            try expect(problem.code == .stepUpRequired && problem.stepUp?.action == .setPaymentPIN, "refused with \(problem.code)")
        }
        await face.sensor.script(.match)
        try await face.flows.setPaymentPIN(pin, currentPassword: password)
        let shown = await face.sensor.presentedPrompts.last?.reason
        let expected = zh ? "验证面容 ID 以修改支付密码" : "Confirm with Face ID to change your payment PIN"
        try expect(shown == expected, "the prompt showed \(shown ?? "-")")
        print("  📱 \(expected)")
        say(
            "Signed in with the password only, Alice could not change her PIN until one Face ID prompt stepped the session up.",
            "仅用密码登录时，Alice 无法修改支付密码；一次面容 ID 验证升级会话后即可修改。"
        )
        return t("step_up_required, then one prompt; PIN changed", "step_up_required，随后一次验证；支付密码已修改")
    }

    /// The payment authorized with Face ID; its receipt and the webhook verify.
    func payWithFaceID(_ stage: DemoStage) async throws -> String {
        let (face, receiver, password, pin) = (stage.face, stage.receiver, stage.password, stage.pin)
        // Setting the PIN is sensitive: this Face ID session is minutes old, so the server takes it without a new prompt.
        try await face.flows.setPaymentPIN(pin, currentPassword: password)
        let paymentToken = try await face.flows.accessToken()
        let pending = try await face.api.payments(status: "pending", accessToken: paymentToken)
        let coffee = try pending.first { $0.id == stage.coffeeID }.orThrow("the bank's request is not pending on the phone")
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

    /// The payment PIN pays when the user falls back from Face ID.
    func payWithPIN(_ stage: DemoStage) async throws -> String {
        let (face, pin) = (stage.face, stage.pin)
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

    /// An OpenID CIBA request approved on the phone; the signed approval verifies offline.
    func callCentreApproval(_ stage: DemoStage) async throws -> String {
        let (face, bank, callCentre) = (stage.face, stage.bank, stage.callCentre)
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
}
