import BioAuthCore
import Foundation

/// One row of the table of sensitive operations (docs/PROTOCOL.md, "Step-up"): what an attacker who got into a session
/// would want, with the level and the maximum age of the evidence each needs. A request that falls short is refused
/// with `step_up_required` (401, RFC 9470's `WWW-Authenticate`) before anything is written for it.
///
/// The table is ``table``. `StepUpTests` walks it (every row refused for a stale session and allowed after
/// a step-up, on both engines) and the contract (every operation a session calls is in a row or in ``notSensitive``
/// with its reason), so an operation added later without a decision fails the tests.
struct SensitiveOperation: Sendable, Equatable {
    /// How a request meets the row's requirement.
    enum MetBy: Sendable, Equatable {
        /// The session's evidence: its sign-in, or a step-up bound to the session (and to ``action``, or to any action)
        /// within ``maxAge``; some rows also count a proof the request carries itself.
        case session
        /// The request's own device-key signature over what the customer sees, checked by its ceremony (an approval's
        /// `approval` payload, a binding's approval or code): fresh by construction, whatever the session.
        case ownProof
    }

    /// The row's name in PROTOCOL.md.
    var name: String
    /// The step-up action a step-up for this row names; nil for rows met by the request's own proof.
    var action: StepUpAction?
    /// The level the row needs (or the strongest the account holds, when that is less).
    var level: AssuranceLevel
    /// The most seconds since that evidence the row accepts.
    var maxAge: TimeInterval
    var metBy: MetBy
    /// The contract's operations the row guards, by operation id.
    var operations: [String]

    /// Changing the account password: the current password in the request counts only for an account with nothing
    /// stronger.
    static let changePassword = freshDeviceKey("change the password", .changePassword, [Operations.ChangePassword.id])
    /// Setting or changing the payment PIN: the request's own `biometric` proof (a `pin` signature) counts; its
    /// `currentPassword` only for an account with nothing stronger.
    static let setPaymentPIN = freshDeviceKey("set or change the payment PIN", .setPaymentPIN, [Operations.SetPaymentPIN.id])
    /// Adding a passkey: a new way in that would outlive the session.
    static let addPasskey = freshDeviceKey(
        "add a passkey",
        .addPasskey,
        [Operations.CreatePasskeyRegistrationOptions.id, Operations.RegisterPasskey.id]
    )
    /// Revoking a device other than the session's own (turning Face ID off on this phone is not sensitive): the step a
    /// phished password would take before binding a phone by password alone.
    static let revokeDevice = freshDeviceKey("revoke another device", .revokeDevice, [Operations.RevokeDevice.id])
    /// Revoking a passkey other than the one the session signed in with.
    static let revokePasskey = freshDeviceKey("revoke a passkey", .revokePasskey, [Operations.RevokePasskey.id])
    /// Creating the customer's recovery codes: each binds a new phone with the password and ends everything else.
    static let createRecoveryCodes = freshDeviceKey("create recovery codes", .createRecoveryCodes, [Operations.CreateCustomerRecoveryCodes.id])
    /// Binding a device: the binding policy (docs/PROTOCOL.md, "Binding a device") asks a bound device's `bind_device`
    /// approval or a binding code of the bank for an account that has a device; the new phone has no key to step up with.
    static let bindDevice = SensitiveOperation(
        name: "bind a device",
        action: nil,
        level: .deviceKey,
        maxAge: 0,
        metBy: .ownProof,
        operations: [Operations.RegisterDevice.id]
    )
    /// Approving an approval request (an `operation`, a sign-in elsewhere, a binding): the approving device's signature over
    /// the canonical approval, made for this answer.
    static let approve = SensitiveOperation(
        name: "approve an operation, a sign-in elsewhere or a new device",
        action: nil,
        level: .deviceKey,
        maxAge: 0,
        metBy: .ownProof,
        operations: [Operations.ApproveApproval.id, Operations.ScanQRSignIn.id]
    )

    /// A row met by the session's evidence: a device key (or the strongest the account holds) within 5 minutes.
    private static func freshDeviceKey(_ name: String, _ action: StepUpAction, _ operations: [String]) -> SensitiveOperation {
        SensitiveOperation(name: name, action: action, level: .deviceKey, maxAge: 300, metBy: .session, operations: operations)
    }

    /// Every row.
    static let table: [SensitiveOperation] = [
        changePassword, setPaymentPIN, addPasskey, revokeDevice, revokePasskey, createRecoveryCodes, bindDevice, approve,
    ]

    /// The row a step-up for `action` counts toward; nil for an action the table does not have.
    static func of(_ action: StepUpAction) -> SensitiveOperation? { table.first { $0.action == action } }

    /// The operations a session calls that are in no row, each with why it needs no fresh evidence. A payment is not here
    /// by oversight: its own ceremony signs the amount and the payee.
    static let notSensitive: [String: String] = [
        Operations.GetMe.id: "reads the account",
        Operations.SignOut.id: "ends the session",
        Operations.ListAuditEvents.id: "reads the account's own log",
        Operations.CreateRegistrationChallenge.id: "a challenge; the binding is decided at registration",
        Operations.RequestDeviceBinding.id: "asks a bound device to approve; binds nothing",
        Operations.ListDevices.id: "reads",
        Operations.ListPasskeys.id: "reads",
        Operations.CreatePayment.id: "creates a pending payment; authorizing it signs the canonical transaction",
        Operations.ListPayments.id: "reads",
        Operations.GetPayment.id: "reads",
        Operations.CreatePaymentChallenge.id: "a challenge for the payment's own signature",
        Operations.AuthorizePaymentWithBiometrics.id: "its device-key signature covers the amount and the payee",
        Operations.AuthorizePaymentWithPIN.id: "its PIN is checked and counted; the PIN is set at the PIN row's level",
        Operations.CancelPayment.id: "stops a pending payment; moves no money",
        Operations.CreatePaymentPINChallenge.id: "a challenge for the PIN row's own proof",
        Operations.ListApprovals.id: "reads",
        Operations.GetApproval.id: "reads",
        Operations.DenyApproval.id: "a no changes nothing but the request",
        Operations.CreateStepUpChallenge.id: "the step-up ceremony itself",
        Operations.StepUpSession.id: "the step-up ceremony itself",
    ]
}
