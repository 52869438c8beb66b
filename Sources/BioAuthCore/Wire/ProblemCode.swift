/// The stable machine codes of the server's problem documents (`application/problem+json`).
///
/// Shared by the server, which chooses them, and the client, which turns them into typed errors. A struct of
/// static members so new codes don't break callers; an unknown code from a newer server keeps its raw value.
public struct ProblemCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The code as the server writes it, e.g. `"challenge_used"`.
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    // Requests
    /// The body is not the JSON the operation takes (syntax, types, missing or unknown fields).
    public static let malformedRequest = ProblemCode(rawValue: "malformed_request")
    /// A binary field is not canonical unpadded base64url.
    public static let invalidEncoding = ProblemCode(rawValue: "invalid_encoding")
    /// The body is larger than the server accepts.
    public static let bodyTooLarge = ProblemCode(rawValue: "body_too_large")
    /// The `Accept` header excludes the only media type the operation answers with (406); nothing was done.
    public static let notAcceptable = ProblemCode(rawValue: "not_acceptable")
    /// No such endpoint.
    public static let notFound = ProblemCode(rawValue: "not_found")
    /// The path exists, with other methods (405); the `Allow` header lists them.
    public static let methodNotAllowed = ProblemCode(rawValue: "method_not_allowed")
    /// The server failed; nothing about the cause is disclosed.
    public static let internalError = ProblemCode(rawValue: "internal_error")
    /// The server cannot serve now (503 from `GET /readyz`): its database does not answer, or it is shutting down.
    public static let notReady = ProblemCode(rawValue: "not_ready")

    // Accounts and passwords
    /// The username is not 3-64 characters of `A-Z a-z 0-9 . _ @ + -`.
    public static let invalidUsername = ProblemCode(rawValue: "invalid_username")
    /// The password has fewer than 8 characters or more than 72 bytes.
    public static let invalidPassword = ProblemCode(rawValue: "invalid_password")
    /// Another account has this username.
    public static let usernameTaken = ProblemCode(rawValue: "username_taken")
    /// Unknown username or wrong password (deliberately not told apart).
    public static let invalidCredentials = ProblemCode(rawValue: "invalid_credentials")
    /// Too many wrong passwords; try again later.
    public static let accountLocked = ProblemCode(rawValue: "account_locked")
    /// The installation id is not 1-64 characters of `A-Z a-z 0-9 . _ -`.
    public static let invalidInstallationID = ProblemCode(rawValue: "invalid_installation_id")

    // Sessions
    /// No bearer token, or one the server never issued.
    public static let unauthenticated = ProblemCode(rawValue: "unauthenticated")
    /// The access token expired; refresh it.
    public static let tokenExpired = ProblemCode(rawValue: "token_expired")
    /// The session was ended (sign-out, a newer sign-in on this installation, revocation, password change).
    public static let sessionEnded = ProblemCode(rawValue: "session_ended")
    /// The refresh token is unknown or expired.
    public static let invalidRefreshToken = ProblemCode(rawValue: "invalid_refresh_token")
    /// A refresh token that was already rotated was presented again: the session is ended.
    public static let refreshTokenReused = ProblemCode(rawValue: "refresh_token_reused")
    /// A sensitive operation needs fresher or stronger evidence than the session has (401, RFC 9470): step up with the
    /// device key (`POST /v1/sessions/current/step-up`), or sign in again; nothing was done.
    public static let stepUpRequired = ProblemCode(rawValue: "step_up_required")

    // Challenges and signatures
    /// No such challenge.
    public static let challengeNotFound = ProblemCode(rawValue: "challenge_not_found")
    /// The challenge is past its lifetime.
    public static let challengeExpired = ProblemCode(rawValue: "challenge_expired")
    /// The challenge was already used (a replay).
    public static let challengeUsed = ProblemCode(rawValue: "challenge_used")
    /// The challenge was issued for another purpose, account, session or key.
    public static let challengeMismatch = ProblemCode(rawValue: "challenge_mismatch")
    /// The signature does not verify over the expected payload with the registered key.
    public static let invalidSignature = ProblemCode(rawValue: "invalid_signature")
    /// The signature verifies, but over a payload for another purpose (a sign-in signature sent to register,
    /// say).
    public static let signaturePurposeMismatch = ProblemCode(rawValue: "signature_purpose_mismatch")
    /// The signature counter did not increase: a possible cloned key.
    public static let counterNotIncreasing = ProblemCode(rawValue: "counter_not_increasing")

    // Devices
    /// The public key is not an uncompressed P-256 point.
    public static let invalidPublicKey = ProblemCode(rawValue: "invalid_public_key")
    /// The key id is not SHA-256 of the public key.
    public static let keyIDMismatch = ProblemCode(rawValue: "key_id_mismatch")
    /// The key is registered already.
    public static let keyAlreadyRegistered = ProblemCode(rawValue: "key_already_registered")
    /// The device name is empty, too long or has control characters.
    public static let invalidDeviceName = ProblemCode(rawValue: "invalid_device_name")
    /// No such device (for this account).
    public static let deviceNotFound = ProblemCode(rawValue: "device_not_found")
    /// The account has a device already (or the deployment binds a first device only with a code): this one binds only
    /// when a bound device approves it or with a binding code from the bank (403); nothing was bound.
    public static let deviceBindingRequired = ProblemCode(rawValue: "device_binding_required")
    /// The binding code is not one for this account that can still be used: mistyped, used, expired or another
    /// account's, deliberately not told apart (403).
    public static let bindingCodeInvalid = ProblemCode(rawValue: "binding_code_invalid")
    /// The password reset code is not one for this customer that can still be used: mistyped, used, expired, another
    /// account's or a binding code, or the username is unknown, deliberately not told apart (403).
    public static let resetCodeInvalid = ProblemCode(rawValue: "reset_code_invalid")
    /// The approval named does not bind this key: not approved (yet), used, or asked for another key or session (403).
    public static let bindingApprovalInvalid = ProblemCode(rawValue: "binding_approval_invalid")
    /// The account has no bound device that could approve a new one (409): bind this one directly.
    public static let noBoundDevice = ProblemCode(rawValue: "no_bound_device")
    /// The device was bound recently by a password alone and is in its cooling-off: it may not approve sign-ins or
    /// bindings, nor pay past the cooling-off's daily limit, until it ends (403, `Retry-After` says when).
    public static let deviceCoolingOff = ProblemCode(rawValue: "device_cooling_off")
    /// The device was revoked; its key is refused.
    public static let deviceRevoked = ProblemCode(rawValue: "device_revoked")

    // Payments
    /// The amount is not a positive integer of minor units.
    public static let invalidAmount = ProblemCode(rawValue: "invalid_amount")
    /// The currency is not an active ISO 4217 code.
    public static let invalidCurrency = ProblemCode(rawValue: "invalid_currency")
    /// The payee id or display name breaks its rules.
    public static let invalidPayee = ProblemCode(rawValue: "invalid_payee")
    /// The memo is too long or has control characters.
    public static let invalidMemo = ProblemCode(rawValue: "invalid_memo")
    /// The `Idempotency-Key` header is empty or too long.
    public static let invalidIdempotencyKey = ProblemCode(rawValue: "invalid_idempotency_key")
    /// The `Idempotency-Key` was used before with another body.
    public static let idempotencyKeyReused = ProblemCode(rawValue: "idempotency_key_reused")
    /// No such payment on this account.
    public static let paymentNotFound = ProblemCode(rawValue: "payment_not_found")
    /// The payment is authorized already (a concurrent or repeated authorization); read it for the receipt.
    public static let paymentAlreadyAuthorized = ProblemCode(rawValue: "payment_already_authorized")
    /// The payment was cancelled.
    public static let paymentCancelled = ProblemCode(rawValue: "payment_cancelled")
    /// The payment expired before it was authorized.
    public static let paymentExpired = ProblemCode(rawValue: "payment_expired")
    /// Too many failed authorizations: the payment can no longer be authorized.
    public static let paymentLocked = ProblemCode(rawValue: "payment_locked")
    /// The device signed a different transaction (amount, currency, payee or payment) than the server's.
    public static let transactionMismatch = ProblemCode(rawValue: "transaction_mismatch")
    /// The PIN is not 6 digits.
    public static let invalidPIN = ProblemCode(rawValue: "invalid_pin")
    /// The PIN is all one digit or a straight run.
    public static let weakPIN = ProblemCode(rawValue: "weak_pin")
    /// No payment PIN is set for the account.
    public static let pinNotSet = ProblemCode(rawValue: "pin_not_set")
    /// The PIN is wrong.
    public static let wrongPIN = ProblemCode(rawValue: "wrong_pin")
    /// Too many wrong PINs: PIN payments are locked for a while.
    public static let pinLocked = ProblemCode(rawValue: "pin_locked")
    /// The deployment requires App Attest, which a PIN payment does not carry, and does not allow PIN payments
    /// without it (403). Pay with biometrics.
    public static let pinPaymentsDisabled = ProblemCode(rawValue: "pin_payments_disabled")

    /// Too many requests of this kind for this key or client in the current window (429).
    public static let rateLimited = ProblemCode(rawValue: "rate_limited")

    // MARK: Service clients (the bank's backend; names as in OAuth 2.0, RFC 6749 §5.2 and RFC 6750 §3.1)

    /// The service client's id or secret is wrong, the client is disabled, or no credentials were sent (401).
    public static let invalidClient = ProblemCode(rawValue: "invalid_client")
    /// `grant_type` is not `client_credentials` (400).
    public static let unsupportedGrantType = ProblemCode(rawValue: "unsupported_grant_type")
    /// A scope asked for is unknown or not granted to the client (400).
    public static let invalidScope = ProblemCode(rawValue: "invalid_scope")
    /// A service endpoint was called without a valid service token: none, an expired one, one of a disabled client, or
    /// a user's access token, which never works there (401).
    public static let invalidServiceToken = ProblemCode(rawValue: "invalid_service_token")
    /// The service token lacks the scope the operation needs (403).
    public static let insufficientScope = ProblemCode(rawValue: "insufficient_scope")
    /// The payee of a payment the bank's backend asked for is not registered (`POST /v1/service/payees`) (422).
    public static let payeeNotRegistered = ProblemCode(rawValue: "payee_not_registered")
    /// A payment request named its payee differently from the name the bank registered for it (422): the prompt only ever
    /// shows the registered name.
    public static let payeeNameMismatch = ProblemCode(rawValue: "payee_name_mismatch")
    /// A payee name that looks like another registered payee's, in another case or with characters that look alike
    /// (409): a prompt shows only the name, so no two payees may look the same.
    public static let payeeNameTaken = ProblemCode(rawValue: "payee_name_taken")
    /// There is no such account (404).
    public static let accountNotFound = ProblemCode(rawValue: "account_not_found")
    /// A webhook URL that is not `https://` (or `http://` to a loopback address), carries credentials or a fragment, or is
    /// longer than 2048 bytes (400).
    public static let invalidWebhookURL = ProblemCode(rawValue: "invalid_webhook_url")
    /// A webhook URL whose destination is not public: a loopback, private, link-local or other non-public address, a name
    /// that resolves to one, or a name only a local network resolves (`.internal`, `.local`, one label); unless the
    /// operator allows it (422).
    public static let webhookDestinationNotAllowed = ProblemCode(rawValue: "webhook_destination_not_allowed")
    /// A webhook endpoint asked for no event, or for one that does not exist (400).
    public static let invalidEventType = ProblemCode(rawValue: "invalid_event_type")
    /// The service client has no such webhook endpoint (404): another client's endpoint is not found either.
    public static let webhookEndpointNotFound = ProblemCode(rawValue: "webhook_endpoint_not_found")
    /// The service client has as many webhook endpoints as allowed (20) (422).
    public static let webhookEndpointLimit = ProblemCode(rawValue: "webhook_endpoint_limit")

    // MARK: Passkeys (WebAuthn): 400 for a malformed credential, 403 for one that fails a check

    /// clientDataJSON, the attestation object or the authenticator data does not parse.
    public static let passkeyMalformed = ProblemCode(rawValue: "passkey_malformed")
    /// clientDataJSON's `type` is not `webauthn.create` (registration) or `webauthn.get` (sign-in).
    public static let passkeyTypeMismatch = ProblemCode(rawValue: "passkey_type_mismatch")
    /// clientDataJSON's `challenge` is not the challenge the server issued for this ceremony.
    public static let passkeyChallengeMismatch = ProblemCode(rawValue: "passkey_challenge_mismatch")
    /// clientDataJSON's `origin` is not a configured origin, or the ceremony ran in a cross-origin frame.
    public static let passkeyOriginMismatch = ProblemCode(rawValue: "passkey_origin_mismatch")
    /// clientDataJSON's `tokenBinding` has a status other than `present` or `supported`.
    public static let passkeyTokenBinding = ProblemCode(rawValue: "passkey_token_binding")
    /// rpIdHash is not SHA-256 of the configured relying party id.
    public static let passkeyRPIDMismatch = ProblemCode(rawValue: "passkey_rp_id_mismatch")
    /// The authenticator did not report user presence.
    public static let passkeyUserNotPresent = ProblemCode(rawValue: "passkey_user_not_present")
    /// The authenticator did not verify the user (biometric, PIN or passcode), which BioAuth requires.
    public static let passkeyUserNotVerified = ProblemCode(rawValue: "passkey_user_not_verified")
    /// The backed-up flag is set on a credential that is not backup-eligible, or backup eligibility changed.
    public static let passkeyBackupFlags = ProblemCode(rawValue: "passkey_backup_flags")
    /// The credential's algorithm is not one the server accepts.
    public static let passkeyUnsupportedAlgorithm = ProblemCode(rawValue: "passkey_unsupported_algorithm")
    /// The credential public key is not a valid COSE key of its algorithm.
    public static let passkeyInvalidPublicKey = ProblemCode(rawValue: "passkey_invalid_public_key")
    /// The attestation statement format is not one the server knows.
    public static let passkeyAttestationFormat = ProblemCode(rawValue: "passkey_attestation_format")
    /// The attestation statement is malformed, its signature does not verify, or its certificate breaks a rule
    /// of its format.
    public static let passkeyAttestationInvalid = ProblemCode(rawValue: "passkey_attestation_invalid")
    /// The deployment requires attestation from listed roots and this credential's does not lead to one.
    public static let passkeyAttestationUntrusted = ProblemCode(rawValue: "passkey_attestation_untrusted")
    /// The assertion's signature does not verify with the stored credential key.
    public static let passkeyInvalidSignature = ProblemCode(rawValue: "passkey_invalid_signature")
    /// At sign-in: the assertion's `userHandle` is missing where the ceremony named no user (a discoverable sign-in), or
    /// is not the handle of the credential's account (WebAuthn §7.2 step 6).
    public static let passkeyUserHandleMismatch = ProblemCode(rawValue: "passkey_user_handle_mismatch")
    /// The signature counter did not increase (a cloned authenticator or a replay).
    public static let passkeyCounterReplayed = ProblemCode(rawValue: "passkey_counter_replayed")
    /// This deployment has no passkey origins configured, so the passkey endpoints are off (404).
    public static let passkeysDisabled = ProblemCode(rawValue: "passkeys_disabled")
    /// The account has no such passkey (404).
    public static let passkeyNotFound = ProblemCode(rawValue: "passkey_not_found")
    /// At sign-in: the credential is not registered, was revoked, or belongs to an account other than the one the
    /// ceremony was started for (401).
    public static let passkeyUnknownCredential = ProblemCode(rawValue: "passkey_unknown_credential")
    /// The credential is registered already (409).
    public static let passkeyAlreadyRegistered = ProblemCode(rawValue: "passkey_already_registered")

    // MARK: The secure environment check (App Attest), all 403

    /// The deployment requires App Attest and the request carries no attestation or assertion, or the device
    /// has no attested key.
    public static let appAttestMissing = ProblemCode(rawValue: "app_attest_missing")
    /// The attestation or assertion is not CBOR of the expected structure.
    public static let appAttestMalformed = ProblemCode(rawValue: "app_attest_malformed")
    /// The attestation's `fmt` is not `apple-appattest`.
    public static let appAttestFormat = ProblemCode(rawValue: "app_attest_format")
    /// A certificate of the attestation is not valid now.
    public static let appAttestCertificateExpired = ProblemCode(rawValue: "app_attest_certificate_expired")
    /// The certificate chain does not lead to Apple's App Attestation Root CA.
    public static let appAttestUntrustedChain = ProblemCode(rawValue: "app_attest_untrusted_chain")
    /// The certificate's nonce does not match the authenticator data and the client data hash.
    public static let appAttestNonceMismatch = ProblemCode(rawValue: "app_attest_nonce_mismatch")
    /// The App Attest key id is not SHA-256 of the attested public key.
    public static let appAttestKeyIDMismatch = ProblemCode(rawValue: "app_attest_key_id_mismatch")
    /// rpIdHash is not SHA-256 of an allowed app id.
    public static let appAttestAppIDMismatch = ProblemCode(rawValue: "app_attest_app_id_mismatch")
    /// An attestation's counter is not 0.
    public static let appAttestCounterNotZero = ProblemCode(rawValue: "app_attest_counter_not_zero")
    /// The aaguid is not an accepted environment's.
    public static let appAttestEnvironmentMismatch = ProblemCode(rawValue: "app_attest_environment_mismatch")
    /// The credential id is not the key id.
    public static let appAttestCredentialIDMismatch = ProblemCode(rawValue: "app_attest_credential_id_mismatch")
    /// The assertion's signature does not verify with the attested key.
    public static let appAttestInvalidSignature = ProblemCode(rawValue: "app_attest_invalid_signature")
    /// The assertion's counter did not increase (a replay or a cloned key).
    public static let appAttestCounterReplayed = ProblemCode(rawValue: "app_attest_counter_replayed")
    /// The App Attest key is already bound to another device.
    public static let appAttestKeyReused = ProblemCode(rawValue: "app_attest_key_reused")

    // Approvals (a sign-in or an operation approved on the phone) and OpenID CIBA
    /// There is no such approval request for this customer.
    public static let approvalNotFound = ProblemCode(rawValue: "approval_not_found")
    /// The request expired before it was answered (410).
    public static let approvalExpired = ProblemCode(rawValue: "approval_expired")
    /// The request was approved or denied already: a second answer is refused (409).
    public static let approvalAlreadyAnswered = ProblemCode(rawValue: "approval_already_answered")
    /// The device signed another request, message, channel or number than the server's (401).
    public static let approvalMismatch = ProblemCode(rawValue: "approval_mismatch")
    /// The user picked another number than the sign-in shows; the request is denied (403).
    public static let approvalNumberMismatch = ProblemCode(rawValue: "approval_number_mismatch")
    /// The customer has as many pending requests as allowed (429).
    public static let approvalLimit = ProblemCode(rawValue: "approval_limit")
    /// CIBA: `login_hint` names no customer.
    public static let unknownUserID = ProblemCode(rawValue: "unknown_user_id")
    /// CIBA: the binding message cannot be shown as it is.
    public static let invalidBindingMessage = ProblemCode(rawValue: "invalid_binding_message")
    /// The service client does not hold the scope this grant or request needs (OAuth `unauthorized_client`).
    public static let unauthorizedClient = ProblemCode(rawValue: "unauthorized_client")
    /// CIBA: the `auth_req_id` is not the client's, or its outcome was collected already.
    public static let invalidGrant = ProblemCode(rawValue: "invalid_grant")
    /// CIBA: the customer has not answered yet; poll again after the interval.
    public static let authorizationPending = ProblemCode(rawValue: "authorization_pending")
    /// CIBA: polled sooner than the interval; the interval grows by 5 seconds.
    public static let slowDown = ProblemCode(rawValue: "slow_down")
    /// CIBA: the customer denied the request.
    public static let accessDenied = ProblemCode(rawValue: "access_denied")
    /// CIBA: the request expired before the customer answered it.
    public static let expiredToken = ProblemCode(rawValue: "expired_token")
    /// Scan to sign in: the scanned code is not this bank's, or is older than 30 seconds.
    public static let qrCodeNotFound = ProblemCode(rawValue: "qr_code_not_found")
    /// Scan to sign in: the code was scanned already (each code signs in once).
    public static let qrCodeUsed = ProblemCode(rawValue: "qr_code_used")
    /// Scan to sign in: the page asking is not in the browser that showed the code (its cookie is missing or another).
    public static let qrBrowserMismatch = ProblemCode(rawValue: "qr_browser_mismatch")
    /// Scan to sign in is off: the deployment does not serve the web sign-in page.
    public static let qrSignInDisabled = ProblemCode(rawValue: "qr_sign_in_disabled")
}

extension ProblemCode {
    /// Every code the server answers with, in the order above (a test holds this list to the declarations).
    public static let all: [ProblemCode] = [
        .malformedRequest, .invalidEncoding, .bodyTooLarge, .notAcceptable, .notFound, .methodNotAllowed, .internalError, .notReady,
        .invalidUsername, .invalidPassword, .usernameTaken, .invalidCredentials, .accountLocked, .invalidInstallationID, .unauthenticated,
        .tokenExpired, .sessionEnded, .invalidRefreshToken, .refreshTokenReused, .stepUpRequired, .challengeNotFound, .challengeExpired,
        .challengeUsed,
        .challengeMismatch, .invalidSignature, .signaturePurposeMismatch, .counterNotIncreasing, .invalidPublicKey, .keyIDMismatch,
        .keyAlreadyRegistered, .invalidDeviceName, .deviceNotFound, .deviceBindingRequired, .bindingCodeInvalid, .resetCodeInvalid,
        .bindingApprovalInvalid, .noBoundDevice, .deviceCoolingOff, .deviceRevoked, .invalidAmount, .invalidCurrency, .invalidPayee, .invalidMemo,
        .invalidIdempotencyKey, .idempotencyKeyReused, .paymentNotFound, .paymentAlreadyAuthorized, .paymentCancelled, .paymentExpired,
        .paymentLocked, .transactionMismatch, .invalidPIN, .weakPIN, .pinNotSet, .wrongPIN, .pinLocked, .pinPaymentsDisabled, .rateLimited,
        .invalidClient, .unsupportedGrantType, .invalidScope, .invalidServiceToken, .insufficientScope, .payeeNotRegistered, .payeeNameMismatch,
        .payeeNameTaken, .accountNotFound, .invalidWebhookURL, .webhookDestinationNotAllowed, .invalidEventType, .webhookEndpointNotFound,
        .webhookEndpointLimit, .passkeyMalformed, .passkeyTypeMismatch, .passkeyChallengeMismatch, .passkeyOriginMismatch, .passkeyTokenBinding,
        .passkeyRPIDMismatch, .passkeyUserNotPresent, .passkeyUserNotVerified, .passkeyBackupFlags, .passkeyUnsupportedAlgorithm,
        .passkeyInvalidPublicKey, .passkeyAttestationFormat, .passkeyAttestationInvalid, .passkeyAttestationUntrusted, .passkeyInvalidSignature,
        .passkeyUserHandleMismatch, .passkeyCounterReplayed, .passkeysDisabled, .passkeyNotFound, .passkeyUnknownCredential,
        .passkeyAlreadyRegistered, .appAttestMissing, .appAttestMalformed, .appAttestFormat, .appAttestCertificateExpired,
        .appAttestUntrustedChain, .appAttestNonceMismatch, .appAttestKeyIDMismatch, .appAttestAppIDMismatch, .appAttestCounterNotZero,
        .appAttestEnvironmentMismatch, .appAttestCredentialIDMismatch, .appAttestInvalidSignature, .appAttestCounterReplayed, .appAttestKeyReused,
        .approvalNotFound, .approvalExpired, .approvalAlreadyAnswered, .approvalMismatch, .approvalNumberMismatch, .approvalLimit, .unknownUserID,
        .invalidBindingMessage, .unauthorizedClient, .invalidGrant, .authorizationPending, .slowDown, .accessDenied, .expiredToken,
        .qrCodeNotFound, .qrCodeUsed, .qrBrowserMismatch, .qrSignInDisabled,
    ]
}
