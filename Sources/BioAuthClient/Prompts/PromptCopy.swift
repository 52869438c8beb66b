import BioAuthCore

/// The localized texts of every biometric prompt and of the "turn on biometric sign-in?" offer.
///
/// ```swift
/// let copy = PromptCopy(language: .simplifiedChinese)
/// let prompt = copy.prompt(
///     for: .authorizePayment(PaymentSummary(amount: Money(minorUnits: 8800, currency: .cny), payeeName: "Coffee Shop")),
///     biometry: .faceID)
/// // prompt.reason == "向 Coffee Shop 支付 ¥88.00", prompt.fallbackTitle == "使用支付密码"
/// ```
public struct PromptCopy: Hashable, Sendable {
    /// The language of every text this makes.
    public let language: Language

    /// Texts in `language`.
    public init(language: Language) { self.language = language }

    /// The system prompt for `purpose` on a device with `biometry`.
    ///
    /// Enabling biometric sign-in hides the fallback button: the key being created can only be unlocked by
    /// biometrics, so a passcode would prove nothing. Lockout recovery evaluates the device passcode.
    public func prompt(for purpose: PromptPurpose, biometry: BiometryKind) -> BiometricPrompt {
        let name = BiometryName.name(of: biometry, in: language)
        let cancel = text("prompt.cancel")
        switch purpose {
        case .unlockApp:
            return BiometricPrompt(
                policy: .biometrics,
                reason: text("prompt.unlockApp.reason", name),
                fallbackTitle: text("prompt.unlockApp.fallback"),
                cancelTitle: cancel
            )
        case .signIn:
            return BiometricPrompt(
                policy: .biometrics,
                reason: text("prompt.signIn.reason", name),
                fallbackTitle: text("prompt.signIn.fallback"),
                cancelTitle: cancel
            )
        case .enableBiometricSignIn:
            return BiometricPrompt(
                policy: .biometrics,
                reason: text("prompt.enableBiometricSignIn.reason", name),
                fallbackTitle: "",
                cancelTitle: cancel
            )
        case .authorizePayment(let payment):
            return BiometricPrompt(
                policy: .biometrics,
                // An unverified payee is said so in the prompt itself: the user decides with it in front of them.
                reason: text(
                    payment.payeeVerified == false ? "prompt.authorizePayment.reasonUnverified" : "prompt.authorizePayment.reason",
                    amount(payment.amount),
                    payeeName(payment.payeeName)
                ),
                fallbackTitle: text("prompt.authorizePayment.fallback"),
                cancelTitle: cancel
            )
        case .recoverFromLockout:
            return BiometricPrompt(
                policy: .deviceOwner,
                reason: text("prompt.recoverFromLockout.reason", name),
                fallbackTitle: nil,
                cancelTitle: cancel
            )
        case .approveRequest(let approval):
            // Only the key can approve: no fallback to the passcode, which would prove nothing the server can check.
            return BiometricPrompt(policy: .biometrics, reason: approvalReason(approval), fallbackTitle: "", cancelTitle: cancel)
        case .stepUp(let action):
            // The server checks the key's signature: a passcode would prove nothing to it.
            let known = StepUpAction.all.contains(action) ? action.rawValue : "any"
            return BiometricPrompt(policy: .biometrics, reason: text("prompt.stepUp.\(known)", name), fallbackTitle: "", cancelTitle: cancel)
        }
    }

    /// "Sign in on Chrome on macOS? Asked by Web Banking", "Sign in at Branch Terminal?", "Approve: Raise the daily transfer
    /// limit to ¥50,000 — asked by Bank Call Centre" or "Let Bob's iPhone · Face ID use your account?".
    public func approvalReason(_ approval: ApprovalSummary) -> String {
        let requester = payeeName(approval.requester)
        switch approval.kind {
        case .signIn:
            guard let channel = channelName(approval.channel) else { return text("prompt.approveSignIn.reasonRequester", requester) }
            return text("prompt.approveSignIn.reason", channel, requester)
        case .operation:
            return text("prompt.approveOperation.reason", payeeName(approval.bindingMessage ?? ""), requester)
        case .bindDevice:
            return text("prompt.approveBinding.reason", payeeName(approval.bindingMessage ?? ""))
        }
    }

    /// "Chrome on macOS", "Chrome" or "macOS"; nil when neither is known.
    public func channelName(_ channel: CanonicalApproval.Channel) -> String? {
        let browser = payeeName(channel.browser)
        let platform = payeeName(channel.platform)
        switch (channel.browser.isEmpty, channel.platform.isEmpty) {
        case (false, false): return text("approval.channel", browser, platform)
        case (false, true): return browser
        case (true, false): return platform
        case (true, true): return nil
        }
    }

    /// The offer shown after a password sign-in: "Sign in with Face ID?" with 启用 / 稍后.
    public func offer(biometry: BiometryKind) -> BiometricSignInOffer {
        let name = BiometryName.name(of: biometry, in: language)
        return BiometricSignInOffer(
            title: text("offer.title", name),
            message: text("offer.message", name),
            enableButton: text("offer.enable"),
            laterButton: text("offer.later")
        )
    }

    /// An amount as the prompts show it: `¥88.00`, `US$12.50`, `JP¥500`.
    public func amount(_ money: Money) -> String { MoneyFormatter.format(money, language: language) }

    /// The payee name as a prompt shows it: control, bidirectional-override and zero-width characters
    /// removed (they could make "Coffee Shop" display as something else than what is signed), white space
    /// collapsed, and at most 64 characters (the server's limit, so a name it accepted is shown whole).
    public func payeeName(_ raw: String) -> String {
        var kept = String.UnicodeScalarView()
        for scalar in raw.unicodeScalars {
            if scalar.properties.isWhitespace {
                kept.append(" ")  // tabs and line breaks separate words; they are not dropped
                continue
            }
            switch scalar.properties.generalCategory {
            case .control, .format, .surrogate, .privateUse, .unassigned: continue
            default: kept.append(scalar)
            }
        }
        let words = String(kept).split(separator: " ", omittingEmptySubsequences: true)
        var name = words.joined(separator: " ")
        if name.count > 64 { name = String(name.prefix(63)) + "…" }
        return name.isEmpty ? text("payee.unnamed") : name
    }

    private func text(_ key: String, _ arguments: String...) -> String {
        Localizer.string(key, language: language, arguments: arguments)
    }
}

/// The texts of the offer to turn on biometric sign-in.
public struct BiometricSignInOffer: Hashable, Sendable {
    /// "Sign in with Face ID?" / "启用面容 ID 登录？"
    public let title: String
    /// One sentence on what it does.
    public let message: String
    /// "Turn On" / "启用"
    public let enableButton: String
    /// "Not Now" / "稍后"
    public let laterButton: String
}
