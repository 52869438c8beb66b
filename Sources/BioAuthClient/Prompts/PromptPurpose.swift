import BioAuthCore

/// Why the app shows a biometric prompt; decides the policy and the texts.
public enum PromptPurpose: Hashable, Sendable {
    /// The app was relaunched or came back from the background and is locked.
    case unlockApp
    /// Sign in with the device key (the session is gone, the device is bound).
    case signIn
    /// The user accepted "Sign in with Face ID?" and the key is being created.
    case enableBiometricSignIn
    /// Approve this payment. The prompt names exactly this amount and payee.
    case authorizePayment(PaymentSummary)
    /// Biometrics are locked out; the device passcode turns them back on.
    case recoverFromLockout
    /// Approve a sign-in or an operation that started on another channel. The prompt names who asks and what.
    case approveRequest(ApprovalSummary)
    /// Confirm a sensitive action with a fresh biometric (a step-up): the prompt names the action, e.g. "Confirm with
    /// Face ID to change your password".
    case stepUp(StepUpAction)
}

/// What an approval prompt shows: who asks, and the sign-in's channel or the operation's message, as the server sent them.
public struct ApprovalSummary: Hashable, Sendable {
    /// A sign-in or an operation.
    public var kind: CanonicalApproval.Kind
    /// Who asks, e.g. "Bank Call Centre".
    public var requester: String
    /// The operation, shown verbatim, e.g. "Raise the daily transfer limit to ¥50,000".
    public var bindingMessage: String?
    /// Where a sign-in comes from.
    public var channel: CanonicalApproval.Channel

    /// A summary of these parts.
    public init(kind: CanonicalApproval.Kind, requester: String, bindingMessage: String?, channel: CanonicalApproval.Channel = .unknown) {
        self.kind = kind
        self.requester = requester
        self.bindingMessage = bindingMessage
        self.channel = channel
    }
}

/// What a payment prompt shows: the amount and the payee, as the server stored them.
public struct PaymentSummary: Hashable, Sendable {
    /// The exact amount, in minor units.
    public var amount: Money
    /// The payee's display name, e.g. "Coffee Shop".
    public var payeeName: String
    /// Whether the bank verified the payee: `false` makes the prompt say it did not; `nil` (not known) says nothing.
    public var payeeVerified: Bool?

    /// A payment of `amount` to `payeeName`, verified by the bank or not (`nil`: not known).
    public init(amount: Money, payeeName: String, payeeVerified: Bool? = nil) {
        self.amount = amount
        self.payeeName = payeeName
        self.payeeVerified = payeeVerified
    }
}
