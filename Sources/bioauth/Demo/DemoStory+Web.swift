import BioAuthClient
import BioAuthCore
import BioAuthServer
import BioAuthTesting
import Foundation

/// The web's steps: scan to sign in, and a passkey.
extension DemoStory {
    /// A web page's QR code scanned and approved with the page's number.
    func scanToSignIn(_ stage: DemoStage) async throws -> String {
        let (face, server) = (stage.face, stage.server)
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
        stage.webToken = try page.accessToken.orThrow("the page was handed no session")
        let stranger = try await WebPage(server: server.url).poll(shown.id)
        try expect(stranger == "qr_browser_mismatch", "another browser learned \(stranger)")
        say(
            "🌐 The page signs in (approved on the phone); another browser asking about the code learns nothing.",
            "🌐 网页已登录（手机确认）；其他浏览器查询该二维码一无所获。"
        )
        return t("signed in by scanning, browser-bound", "扫码登录成功，且与浏览器绑定")

    }

    /// A passkey on the web signs in without a username and pays nothing.
    func webPasskey(_ stage: DemoStage) async throws -> String {
        let (bank, server, password) = (stage.bank, stage.server, stage.password)
        // Alice's laptop browser; the passkey lives in her password manager (synced, like iCloud Keychain).
        let laptop = SimulatedPasskeyProvider()
        let web = BioAuthAPI(serverURL: server.url)
        // Adding a passkey is sensitive: a password session on an account with a phone may not (a phished password must not
        // add a way in); the page signed in by scanning, approved with the iPhone's key moments ago, may.
        let session = try await web.signIn(username: "alice", password: password, installationID: "alice-laptop-browser")
        do {
            _ = try await web.passkeyCreationChallenge(accessToken: session.accessToken)
            throw Deviation(detail: "a password session added a passkey")
        } catch let problem as APIProblem {
            try expect(problem.code == .stepUpRequired, "refused with \(problem.code)")
            say(
                "A password session cannot add a passkey (\(problem.code)); the page signed in with the iPhone can.",
                "密码会话不能添加通行密钥（\(problem.code)）；用 iPhone 扫码登录的网页可以。"
            )
        }
        try await web.signOut(accessToken: session.accessToken)
        let creation = try await web.passkeyCreationChallenge(accessToken: stage.webToken)
        let passkey = try await web.registerPasskey(
            challengeID: creation.id,
            try await laptop.register(creation.request),
            name: "Alice's MacBook",
            accessToken: stage.webToken
        )
        try expect(passkey.backupEligible, "the passkey is not a synced one")
        say(
            "Passkey \(Self.short(passkey.id)) registered; its user handle is \(creation.request.userID.count) random bytes, not the account id.",
            "通行密钥 \(Self.short(passkey.id)) 已登记；其用户句柄是 \(creation.request.userID.count) 个随机字节，而非账户编号。"
        )
        try await web.signOut(accessToken: stage.webToken)
        let challenge = try await web.passkeySignInChallenge()
        try expect(challenge.request.allowedCredentialIDs.isEmpty, "the sign-in named credentials")
        let tokens = try await web.signInWithPasskey(
            challengeID: challenge.id,
            try await laptop.assert(challenge.request),
            installationID: "alice-laptop-browser"
        )
        let introspected = try await bank.introspect(tokens.accessToken, token: stage.bankToken)
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
}
