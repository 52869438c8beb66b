import HTTPTypes

/// What the server decides for an operation before its handler runs: the credential it needs, the media type it
/// answers with, whether it carries cookies past the generated code, whether the contract requires an
/// `Idempotency-Key`, and whether its problems speak OAuth. One row per operation of the contract, in
/// ``OperationPolicy/table``; the middlewares read their part of the row and keep no list of their own.
///
/// `OperationPolicyTests` walks the contract the server serves: an operation it has and the table lacks (or a row that
/// disagrees with the contract's security, success media type or required headers) fails the build's tests. An
/// operation missing from the table anyway is refused by ``CredentialMiddleware`` as a server error, never served
/// without a credential.
struct OperationPolicy: Sendable, Equatable {
    /// The credential an operation needs, checked before its body is read.
    enum Credential: Sendable, Equatable {
        /// None: anyone may call it (each such operation counts its own limits).
        case none
        /// A customer's access token (`Authorization: Bearer`).
        case session
        /// A service token holding `scope` (`Authorization: Bearer`).
        case service(scope: String)
        /// A service client's id and secret (`Authorization: Basic`, RFC 6749 §2.3.1), counted per client address before
        /// they are checked, and holding `scope` when one is given (the token endpoint's grants decide theirs).
        case client(scope: String?)
    }

    var credential: Credential
    /// The media type of the successful response; nil for an operation that answers 204 No Content.
    var produces: AcceptHeader.MediaType? = .json
    /// The request's cookies are read and the handler's `Set-Cookie` values sent (a QR sign-in binds its code to the
    /// browser that showed it).
    var cookies = false
    /// The contract requires an `Idempotency-Key` header: its absence is answered `invalid_idempotency_key`.
    var idempotencyKey = false
    /// Problems also carry OAuth's `error` and `error_description` (RFC 6749 §5.2, OpenID CIBA §13).
    var oauthProblems = false

    /// The row of `operationID`; nil for an operation the table lacks.
    static func of(_ operationID: String) -> OperationPolicy? { table[operationID] }

    private static let session = OperationPolicy(credential: .session)
    private static let sessionNoContent = OperationPolicy(credential: .session, produces: nil)
    private static let open = OperationPolicy(credential: .none)
    private static func service(_ scope: String, produces: AcceptHeader.MediaType? = .json) -> OperationPolicy {
        OperationPolicy(credential: .service(scope: scope), produces: produces)
    }
    private static func client(_ scope: String?) -> OperationPolicy {
        OperationPolicy(credential: .client(scope: scope), oauthProblems: true)
    }

    /// Every operation of the contract, by operation id.
    static let table: [String: OperationPolicy] = [
        // Meta
        Operations.Health.id: open,
        Operations.Ready.id: open,
        Operations.OpenAPIDocument.id: OperationPolicy(credential: .none, produces: .init(type: "application", subtype: "yaml")),
        Operations.ListReceiptKeys.id: open,
        // Accounts and sessions
        Operations.CreateAccount.id: open,
        Operations.GetMe.id: session,
        Operations.ChangePassword.id: sessionNoContent,
        Operations.CreateCustomerRecoveryCodes.id: session,
        Operations.ResetPassword.id: OperationPolicy(credential: .none, produces: nil),
        Operations.SignInWithPassword.id: open,
        Operations.RefreshSession.id: open,
        Operations.SignOut.id: sessionNoContent,
        Operations.CreateStepUpChallenge.id: session,
        Operations.StepUpSession.id: session,
        Operations.CreateSignInChallenge.id: open,
        Operations.SignInWithBiometrics.id: open,
        Operations.ListAuditEvents.id: session,
        // Devices
        Operations.CreateRegistrationChallenge.id: session,
        Operations.RegisterDevice.id: session,
        Operations.RequestDeviceBinding.id: session,
        Operations.ListDevices.id: session,
        Operations.RevokeDevice.id: sessionNoContent,
        // Passkeys
        Operations.CreatePasskeyRegistrationOptions.id: session,
        Operations.RegisterPasskey.id: session,
        Operations.ListPasskeys.id: session,
        Operations.RevokePasskey.id: sessionNoContent,
        Operations.CreatePasskeySignInOptions.id: open,
        Operations.SignInWithPasskey.id: open,
        // Payments
        Operations.CreatePayment.id: OperationPolicy(credential: .session, idempotencyKey: true),
        Operations.ListPayments.id: session,
        Operations.GetPayment.id: session,
        Operations.CreatePaymentChallenge.id: session,
        Operations.AuthorizePaymentWithBiometrics.id: session,
        Operations.AuthorizePaymentWithPIN.id: session,
        Operations.CancelPayment.id: session,
        Operations.CreatePaymentPINChallenge.id: session,
        Operations.SetPaymentPIN.id: sessionNoContent,
        // Approvals and scan to sign in
        Operations.ListApprovals.id: session,
        Operations.GetApproval.id: session,
        Operations.ApproveApproval.id: session,
        Operations.DenyApproval.id: session,
        Operations.CreateQRSignIn.id: OperationPolicy(credential: .none, cookies: true),
        Operations.GetQRSignInSession.id: OperationPolicy(credential: .none, cookies: true),
        Operations.ScanQRSignIn.id: session,
        // The bank's backend
        Operations.IssueServiceToken.id: client(nil),
        Operations.BackchannelAuthorize.id: client("approvals:write"),
        Operations.IntrospectToken.id: service("sessions:introspect"),
        Operations.RegisterPayee.id: service("payees:write"),
        Operations.CreateBindingCode.id: service("bindings:write"),
        Operations.CreateRecoveryCode.id: service("bindings:write"),
        Operations.CreatePasswordResetCode.id: service("passwords:reset"),
        Operations.CreateServicePayment.id: OperationPolicy(credential: .service(scope: "payments:write"), idempotencyKey: true),
        Operations.CreateWebhookEndpoint.id: service("webhooks:write"),
        Operations.ListWebhookEndpoints.id: service("webhooks:write"),
        Operations.DeleteWebhookEndpoint.id: service("webhooks:write", produces: nil),
        Operations.RotateWebhookSecret.id: service("webhooks:write"),
        Operations.ListWebhookDeliveries.id: service("webhooks:write"),
    ]
}
