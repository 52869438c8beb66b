import BioAuthClient
import BioAuthCore
import Testing

@Suite("Prompt copy")
struct PromptCopyTests {
    let english = PromptCopy(language: .english)
    let chinese = PromptCopy(language: .simplifiedChinese)
    let coffee = PaymentSummary(amount: Money(minorUnits: 8800, currency: .cny), payeeName: "Coffee Shop")

    @Test("a payment prompt shows exactly the amount and the payee, in both languages")
    func payment() {
        let en = english.prompt(for: .authorizePayment(coffee), biometry: .faceID)
        #expect(en.reason == "Pay ¥88.00 to Coffee Shop")
        #expect(en.fallbackTitle == "Pay with PIN")
        #expect(en.cancelTitle == "Cancel")
        #expect(en.policy == .biometrics)
        let zh = chinese.prompt(for: .authorizePayment(coffee), biometry: .faceID)
        #expect(zh.reason == "向 Coffee Shop 支付 ¥88.00")
        #expect(zh.fallbackTitle == "使用支付密码")
        #expect(zh.cancelTitle == "取消")
    }

    @Test("an approval prompt names who asks and what, in both languages, with no fallback to the passcode")
    func approval() {
        let operation = ApprovalSummary(kind: .operation, requester: "Bank Call Centre", bindingMessage: "Raise the daily transfer limit to ¥50,000")
        let en = english.prompt(for: .approveRequest(operation), biometry: .faceID)
        #expect(en.reason == "Approve: Raise the daily transfer limit to ¥50,000 — asked by Bank Call Centre")
        #expect(en.fallbackTitle == "" && en.policy == .biometrics)
        let zhOperation = ApprovalSummary(kind: .operation, requester: "客服中心", bindingMessage: "将每日转账限额提高到¥50,000")
        #expect(chinese.prompt(for: .approveRequest(zhOperation), biometry: .faceID).reason == "确认：将每日转账限额提高到¥50,000（由 客服中心 发起）")

        let web = ApprovalSummary(kind: .signIn, requester: "Web Banking", bindingMessage: nil, channel: .init(browser: "Chrome", platform: "macOS"))
        #expect(english.prompt(for: .approveRequest(web), biometry: .faceID).reason == "Sign in on Chrome on macOS? Asked by Web Banking")
        #expect(chinese.prompt(for: .approveRequest(web), biometry: .faceID).reason == "通过 macOS 上的 Chrome 登录？由 Web Banking 发起")
        let branch = ApprovalSummary(kind: .signIn, requester: "Branch Terminal", bindingMessage: nil)
        #expect(english.prompt(for: .approveRequest(branch), biometry: .touchID).reason == "Sign in at Branch Terminal?")
        #expect(chinese.prompt(for: .approveRequest(branch), biometry: .touchID).reason == "在 Branch Terminal 登录？")
        // A bidirectional override in what the server sent never reaches the prompt.
        let spoofed = ApprovalSummary(kind: .operation, requester: "Bank", bindingMessage: "Pay \u{202E}000,5¥")
        #expect(!english.prompt(for: .approveRequest(spoofed), biometry: .faceID).reason.unicodeScalars.contains("\u{202E}"))
    }

    @Test("a payee the bank has not verified is said so in the prompt, in both languages; a verified or unknown state adds nothing")
    func unverifiedPayee() {
        var unverified = coffee
        unverified.payeeVerified = false
        #expect(
            english.prompt(for: .authorizePayment(unverified), biometry: .faceID).reason == "Pay ¥88.00 to Coffee Shop (not verified by your bank)"
        )
        #expect(chinese.prompt(for: .authorizePayment(unverified), biometry: .faceID).reason == "向 Coffee Shop 支付 ¥88.00（该收款方未经银行认证）")
        var verified = coffee
        verified.payeeVerified = true
        #expect(english.prompt(for: .authorizePayment(verified), biometry: .touchID).reason == "Pay ¥88.00 to Coffee Shop")
        #expect(english.prompt(for: .authorizePayment(coffee), biometry: .touchID).reason == "Pay ¥88.00 to Coffee Shop")
    }

    @Test("every purpose has its texts for every sensor, in both languages")
    func everyPurpose() {
        let purposes: [PromptPurpose] = [.unlockApp, .signIn, .enableBiometricSignIn, .authorizePayment(coffee), .recoverFromLockout]
        for language in Language.all {
            let copy = PromptCopy(language: language)
            for purpose in purposes {
                for kind in BiometryKind.allKnown {
                    let prompt = copy.prompt(for: purpose, biometry: kind)
                    #expect(!prompt.reason.isEmpty && !prompt.reason.hasPrefix("prompt.") && !prompt.reason.contains("%"))
                    #expect(prompt.cancelTitle?.isEmpty == false)
                }
            }
        }
    }

    @Test(
        "texts name the sensor",
        arguments: [
            (BiometryKind.faceID, PromptPurpose.unlockApp, "Unlock with Face ID to continue", "使用面容 ID 解锁以继续"),
            (.touchID, .unlockApp, "Unlock with Touch ID to continue", "使用触控 ID 解锁以继续"),
            (.faceID, .signIn, "Sign in with Face ID", "使用面容 ID 登录"),
            (.touchID, .enableBiometricSignIn, "Confirm with Touch ID to turn on Touch ID sign-in", "验证触控 ID 以开启触控 ID 登录"),
            (.faceID, .recoverFromLockout, "Enter your passcode to turn Face ID back on", "输入设备密码以重新启用面容 ID"),
        ]
    )
    func sensorNames(kind: BiometryKind, purpose: PromptPurpose, english: String, chinese: String) {
        #expect(self.english.prompt(for: purpose, biometry: kind).reason == english)
        #expect(self.chinese.prompt(for: purpose, biometry: kind).reason == chinese)
    }

    @Test("enabling hides the fallback button; lockout recovery asks for the passcode")
    func policiesAndButtons() {
        let enable = english.prompt(for: .enableBiometricSignIn, biometry: .faceID)
        #expect(enable.fallbackTitle == "")
        #expect(!enable.showsFallbackButton)
        #expect(enable.policy == .biometrics)
        let recover = chinese.prompt(for: .recoverFromLockout, biometry: .touchID)
        #expect(recover.policy == .deviceOwner)
        #expect(recover.showsFallbackButton)
        #expect(english.prompt(for: .signIn, biometry: .faceID).fallbackTitle == "Use Password")
        #expect(chinese.prompt(for: .signIn, biometry: .faceID).fallbackTitle == "使用密码登录")
        #expect(chinese.prompt(for: .unlockApp, biometry: .faceID).fallbackTitle == "使用密码")
    }

    @Test(
        "amounts are formatted from integer minor units",
        arguments: [
            (Int64(8800), "CNY", "¥88.00", "¥88.00"),
            (123_456_789, "CNY", "¥1,234,567.89", "¥1,234,567.89"),
            (1, "CNY", "¥0.01", "¥0.01"),
            (1250, "USD", "$12.50", "US$12.50"),
            (500, "JPY", "JP¥500", "JP¥500"),
            (1_000_000, "KRW", "₩1,000,000", "₩1,000,000"),
            (1250, "KWD", "KWD\u{00A0}1.250", "KWD\u{00A0}1.250"),
            (1250, "CHF", "CHF\u{00A0}12.50", "CHF\u{00A0}12.50"),
            (-8800, "HKD", "-HK$88.00", "-HK$88.00"),
        ]
    )
    func amounts(minorUnits: Int64, code: String, english: String, chinese: String) throws {
        let money = Money(minorUnits: minorUnits, currency: try #require(Currency(code: code)))
        #expect(self.english.amount(money) == english)
        #expect(self.chinese.amount(money) == chinese)
    }

    @Test("a payee name cannot disguise itself with control, bidi or zero-width characters")
    func payeeSpoofing() {
        // U+202E RIGHT-TO-LEFT OVERRIDE would make "Coffee Shop" render reversed after it.
        #expect(english.payeeName("Evil\u{202E}pohS eeffoC") == "EvilpohS eeffoC")
        #expect(english.payeeName("Coffee\u{200B}Shop") == "CoffeeShop")
        #expect(english.payeeName("Coffee\nShop\t\t Ltd ") == "Coffee Shop Ltd")
        #expect(english.payeeName("咖啡店\u{0007}") == "咖啡店")
        #expect(english.payeeName("\u{202A}\u{2066}  ") == "an unnamed payee")
        #expect(chinese.payeeName("") == "未命名收款方")
        #expect(english.payeeName(String(repeating: "A", count: 64)) == String(repeating: "A", count: 64))
        #expect(english.payeeName(String(repeating: "A", count: 70)) == String(repeating: "A", count: 63) + "…")
        let payment = PaymentSummary(amount: Money(minorUnits: 100, currency: .cny), payeeName: "Shop\u{202E}")
        #expect(english.prompt(for: .authorizePayment(payment), biometry: .faceID).reason == "Pay ¥1.00 to Shop")
    }

    @Test("the offer after a password sign-in: 启用 / 稍后")
    func offer() {
        let zh = chinese.offer(biometry: .faceID)
        #expect(zh.title == "启用面容 ID 登录？")
        #expect(zh.enableButton == "启用")
        #expect(zh.laterButton == "稍后")
        let en = english.offer(biometry: .touchID)
        #expect(en.title == "Sign in with Touch ID?")
        #expect(en.enableButton == "Turn On")
        #expect(en.laterButton == "Not Now")
    }
}
