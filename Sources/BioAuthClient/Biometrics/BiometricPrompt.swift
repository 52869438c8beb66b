/// One request to show the system's biometric prompt.
///
/// Build it from ``PromptCopy`` rather than by hand, so the text is localized and the payment prompt shows
/// exactly the amount and payee that will be signed.
public struct BiometricPrompt: Hashable, Sendable {
    /// Biometrics only, or biometrics or passcode.
    public var policy: AuthenticationPolicy
    /// Why the app asks (`LAContext`'s `localizedReason`). Must not be empty. Touch ID and Optic ID show it
    /// in the system prompt; Face ID does not, so the app must show the same text on screen.
    public var reason: String
    /// The fallback button's title. `nil` keeps the system's default; an empty string hides the button.
    public var fallbackTitle: String?
    /// The cancel button's title; `nil` keeps the system's default.
    public var cancelTitle: String?

    /// A prompt for `policy` with the given texts.
    public init(policy: AuthenticationPolicy, reason: String, fallbackTitle: String? = nil, cancelTitle: String? = nil) {
        self.policy = policy
        self.reason = reason
        self.fallbackTitle = fallbackTitle
        self.cancelTitle = cancelTitle
    }

    /// Whether the prompt shows a fallback button (a non-empty or default title).
    public var showsFallbackButton: Bool { fallbackTitle.map { !$0.isEmpty } ?? true }
}
