import BioAuthCore
import Foundation
import OpenAPIRuntime

/// The generated API's operations, translated to and from ``BioAuthService``. No decisions are made here.
struct APIHandler: APIProtocol {
    let service: BioAuthService
    let openAPIDocument: Data

    /// The session ``CredentialMiddleware`` authenticated before the body was read.
    private func session() async throws -> AuthenticatedSession {
        guard let session = CredentialMiddleware.session else { throw APIError(.unauthenticated, "Sign in first.") }
        return session
    }

    /// The service client ``CredentialMiddleware`` authenticated, with the operation's scope, before the body was read.
    private func serviceClient() throws -> AuthenticatedService {
        guard let client = CredentialMiddleware.client else { throw APIError(.invalidServiceToken, "This operation needs a service token.") }
        return client
    }

    // MARK: Meta

    func health(_ input: Operations.Health.Input) async throws -> Operations.Health.Output {
        .ok(.init(body: .json(.init(status: .ok))))
    }

    func ready(_ input: Operations.Ready.Input) async throws -> Operations.Ready.Output {
        try await service.checkReadiness()
        return .ok(.init(body: .json(.init(status: .ok))))
    }

    func openAPIDocument(_ input: Operations.OpenAPIDocument.Input) async throws -> Operations.OpenAPIDocument.Output {
        .ok(.init(body: .yaml(HTTPBody(openAPIDocument))))
    }

    // MARK: Accounts

    func createAccount(_ input: Operations.CreateAccount.Input) async throws -> Operations.CreateAccount.Output {
        guard case .json(let request) = input.body else { throw APIError(.malformedRequest, "Send JSON.") }
        let account = try await service.createAccount(username: request.username, password: request.password)
        return .created(.init(body: .json(.init(accountId: account.id, username: account.username, createdAt: account.createdAt))))
    }

    func getMe(_ input: Operations.GetMe.Input) async throws -> Operations.GetMe.Output {
        let session = try await session()
        return .ok(
            .init(
                body: .json(
                    .init(
                        accountId: session.accountID,
                        username: session.username,
                        sessionId: session.sessionID,
                        installationId: session.installationID,
                        signInMethod: Components.Schemas.Me.SignInMethodPayload(rawValue: session.method.rawValue) ?? .password,
                        deviceId: session.deviceID,
                        passkeyId: session.passkeyID
                    )
                )
            )
        )
    }

    func changePassword(_ input: Operations.ChangePassword.Input) async throws -> Operations.ChangePassword.Output {
        guard case .json(let request) = input.body else { throw APIError(.malformedRequest, "Send JSON.") }
        try await service.changePassword(session: try await session(), current: request.currentPassword, new: request.newPassword)
        return .noContent(.init())
    }

    // MARK: Sessions

    func signInWithPassword(_ input: Operations.SignInWithPassword.Input) async throws -> Operations.SignInWithPassword.Output {
        guard case .json(let request) = input.body else { throw APIError(.malformedRequest, "Send JSON.") }
        let tokens = try await counted(
            { service.metrics.signIn(.password, outcome: $0) },
            {
                try await service.signInWithPassword(username: request.username, password: request.password, installationID: request.installationId)
            }
        )
        return .created(.init(body: .json(Self.tokens(tokens))))
    }

    func refreshSession(_ input: Operations.RefreshSession.Input) async throws -> Operations.RefreshSession.Output {
        guard case .json(let request) = input.body else { throw APIError(.malformedRequest, "Send JSON.") }
        let tokens = try await counted(
            { service.metrics.signIn(.refresh, outcome: $0) },
            {
                try await service.refresh(token: request.refreshToken)
            }
        )
        return .ok(.init(body: .json(Self.tokens(tokens))))
    }

    func signOut(_ input: Operations.SignOut.Input) async throws -> Operations.SignOut.Output {
        try await service.signOut(try await session())
        return .noContent(.init())
    }

    func createSignInChallenge(_ input: Operations.CreateSignInChallenge.Input) async throws -> Operations.CreateSignInChallenge.Output {
        guard case .json(let request) = input.body else { throw APIError(.malformedRequest, "Send JSON.") }
        return .created(.init(body: .json(challenge(try await service.createSignInChallenge(keyID: request.keyId)))))
    }

    func signInWithBiometrics(_ input: Operations.SignInWithBiometrics.Input) async throws -> Operations.SignInWithBiometrics.Output {
        guard case .json(let request) = input.body else { throw APIError(.malformedRequest, "Send JSON.") }
        let tokens = try await counted(
            { service.metrics.signIn(.biometric, outcome: $0) },
            {
                try await service.signInWithBiometrics(
                    challengeID: request.challengeId,
                    keyID: request.keyId,
                    counter: request.counter,
                    signature: request.signature,
                    appAttestAssertion: request.appAttestAssertion
                )
            }
        )
        return .created(.init(body: .json(Self.tokens(tokens))))
    }

    // MARK: Devices

    func createRegistrationChallenge(
        _ input: Operations.CreateRegistrationChallenge.Input
    ) async throws
        -> Operations.CreateRegistrationChallenge.Output
    {
        .created(.init(body: .json(challenge(try await service.createRegistrationChallenge(session: try await session())))))
    }

    func registerDevice(_ input: Operations.RegisterDevice.Input) async throws -> Operations.RegisterDevice.Output {
        guard case .json(let request) = input.body else { throw APIError(.malformedRequest, "Send JSON.") }
        let session = try await session()
        let registration = try DeviceRegistration(
            challengeID: request.challengeId,
            publicKey: request.publicKey,
            keyID: request.keyId,
            biometryKind: try Self.kind(request.biometryKind),
            name: request.deviceName,
            counter: request.counter,
            signature: request.signature,
            appAttest: request.appAttest.map { ($0.keyId, $0.attestation) }
        )
        return .created(.init(body: .json(try Self.device(try await service.registerDevice(session: session, registration)))))
    }

    func listDevices(_ input: Operations.ListDevices.Input) async throws -> Operations.ListDevices.Output {
        let devices = try await service.devices(of: try await session())
        return .ok(.init(body: .json(.init(devices: try devices.map(Self.device)))))
    }

    func revokeDevice(_ input: Operations.RevokeDevice.Input) async throws -> Operations.RevokeDevice.Output {
        try await service.revokeDevice(input.path.deviceId, session: try await session())
        return .noContent(.init())
    }

    // MARK: Passkeys

    func createPasskeyRegistrationOptions(
        _ input: Operations.CreatePasskeyRegistrationOptions.Input
    ) async throws
        -> Operations.CreatePasskeyRegistrationOptions.Output
    {
        let options = try await service.passkeyRegistrationOptions(session: try await session())
        return .created(
            .init(
                body: .json(
                    .init(
                        challengeId: options.challengeID,
                        publicKey: .init(
                            rp: .init(id: options.relyingPartyID, name: options.relyingPartyName),
                            user: .init(id: Base64URL.encode(options.userHandle), name: options.username, displayName: options.username),
                            challenge: Base64URL.encode(options.challenge),
                            pubKeyCredParams: options.algorithms.map { .init(_type: .publicKey, alg: $0) },
                            timeout: Int(options.timeout * 1000),
                            excludeCredentials: options.exclude.map(Self.descriptor),
                            authenticatorSelection: .init(residentKey: .required, requireResidentKey: true, userVerification: .required),
                            attestation: options.directAttestation
                                ? .direct : Components.Schemas.PasskeyCreationOptions.PublicKeyPayload.AttestationPayload.none
                        )
                    )
                )
            )
        )
    }

    func registerPasskey(_ input: Operations.RegisterPasskey.Input) async throws -> Operations.RegisterPasskey.Output {
        guard case .json(let request) = input.body else { throw APIError(.malformedRequest, "Send JSON.") }
        let session = try await session()
        let credential = request.credential
        let submission = PasskeyRegistrationSubmission(
            challengeID: request.challengeId,
            credentialID: try Validation.bytes(credential.rawId, field: "rawId", maxLength: AuthenticatorData.maxCredentialIDLength),
            clientDataJSON: try Validation.bytes(credential.response.clientDataJSON, field: "clientDataJSON", maxLength: 4096),
            attestationObject: try Validation.bytes(
                credential.response.attestationObject,
                field: "attestationObject",
                maxLength: WebAuthnRelyingParty.maxAttestationObjectSize
            ),
            transports: credential.response.transports ?? [],
            name: request.name ?? "Passkey"
        )
        guard credential.id == credential.rawId else { throw APIError(.malformedRequest, "credential.id and credential.rawId differ.") }
        return .created(.init(body: .json(Self.passkey(try await service.registerPasskey(submission, session: session)))))
    }

    func listPasskeys(_ input: Operations.ListPasskeys.Input) async throws -> Operations.ListPasskeys.Output {
        let passkeys = try await service.passkeys(account: try await session().accountID)
        return .ok(.init(body: .json(.init(passkeys: passkeys.map(Self.passkey)))))
    }

    func revokePasskey(_ input: Operations.RevokePasskey.Input) async throws -> Operations.RevokePasskey.Output {
        try await service.revokePasskey(input.path.passkeyId, session: try await session())
        return .noContent(.init())
    }

    func createPasskeySignInOptions(_ input: Operations.CreatePasskeySignInOptions.Input) async throws -> Operations.CreatePasskeySignInOptions.Output
    {
        guard case .json(let request) = input.body else { throw APIError(.malformedRequest, "Send JSON.") }
        let options = try await service.passkeySignInOptions(username: request.username)
        return .created(
            .init(
                body: .json(
                    .init(
                        challengeId: options.challengeID,
                        publicKey: .init(
                            challenge: Base64URL.encode(options.challenge),
                            rpId: options.relyingPartyID,
                            timeout: Int(options.timeout * 1000),
                            userVerification: .required,
                            allowCredentials: options.allow.map(Self.descriptor)
                        )
                    )
                )
            )
        )
    }

    func signInWithPasskey(_ input: Operations.SignInWithPasskey.Input) async throws -> Operations.SignInWithPasskey.Output {
        guard case .json(let request) = input.body else { throw APIError(.malformedRequest, "Send JSON.") }
        let credential = request.credential
        let submission = PasskeyAssertionSubmission(
            challengeID: request.challengeId,
            credentialID: try Validation.bytes(credential.rawId, field: "rawId", maxLength: AuthenticatorData.maxCredentialIDLength),
            clientDataJSON: try Validation.bytes(credential.response.clientDataJSON, field: "clientDataJSON", maxLength: 4096),
            authenticatorData: try Validation.bytes(credential.response.authenticatorData, field: "authenticatorData", maxLength: 16 * 1024),
            signature: try Validation.bytes(credential.response.signature, field: "signature", maxLength: 8 * 1024),
            userHandle: try credential.response.userHandle.flatMap {
                $0.isEmpty ? nil : try Validation.bytes($0, field: "userHandle", maxLength: 64)
            },
            installationID: request.installationId
        )
        guard credential.id == credential.rawId else { throw APIError(.malformedRequest, "credential.id and credential.rawId differ.") }
        let tokens = try await counted({ service.metrics.signIn(.passkey, outcome: $0) }, { try await service.signInWithPasskey(submission) })
        return .created(.init(body: .json(Self.tokens(tokens))))
    }

    private static func descriptor(_ descriptor: PasskeyDescriptor) -> Components.Schemas.PasskeyCredentialDescriptor {
        .init(_type: .publicKey, id: Base64URL.encode(descriptor.id), transports: descriptor.transports.isEmpty ? nil : descriptor.transports)
    }

    private static func passkey(_ passkey: PasskeyInfo) -> Components.Schemas.Passkey {
        .init(
            passkeyId: passkey.id,
            name: passkey.name,
            credentialId: Base64URL.encode(passkey.credentialID),
            algorithm: passkey.algorithm,
            aaguid: passkey.aaguid,
            backupEligible: passkey.backupEligible,
            backedUp: passkey.backedUp,
            attestationFormat: passkey.attestationFormat,
            attestationType: Components.Schemas.Passkey.AttestationTypePayload(rawValue: passkey.attestationType) ?? .none,
            attestationTrusted: passkey.attestationTrusted,
            transports: passkey.transports,
            createdAt: passkey.createdAt,
            lastUsedAt: passkey.lastUsedAt,
            revokedAt: passkey.revokedAt
        )
    }

    // MARK: Payments

    func createPayment(_ input: Operations.CreatePayment.Input) async throws -> Operations.CreatePayment.Output {
        guard case .json(let body) = input.body else { throw APIError(.malformedRequest, "Send JSON.") }
        let session = try await session()
        let request = try PaymentRequest(
            amountMinor: body.amountMinor,
            currency: body.currency,
            payeeID: body.payeeId,
            payeeName: body.payeeName,
            memo: body.memo,
            idempotencyKey: input.headers.idempotencyKey
        )
        return .created(.init(body: .json(try Self.payment(try await service.createPayment(session: session, request)))))
    }

    func listPayments(_ input: Operations.ListPayments.Input) async throws -> Operations.ListPayments.Output {
        let limit = input.query.limit ?? 50
        guard (1...200).contains(limit) else { throw APIError(.malformedRequest, "limit must be 1-200.") }
        let status = input.query.status.flatMap { PaymentInfo.Status(rawValue: $0.rawValue) }
        let payments = try await service.payments(session: try await session(), limit: limit, status: status)
        return .ok(.init(body: .json(.init(payments: try payments.map(Self.payment)))))
    }

    func getPayment(_ input: Operations.GetPayment.Input) async throws -> Operations.GetPayment.Output {
        .ok(.init(body: .json(try Self.payment(try await service.payment(input.path.paymentId, session: try await session())))))
    }

    func createPaymentChallenge(_ input: Operations.CreatePaymentChallenge.Input) async throws -> Operations.CreatePaymentChallenge.Output {
        guard case .json(let body) = input.body else { throw APIError(.malformedRequest, "Send JSON.") }
        let issued = try await service.createPaymentChallenge(input.path.paymentId, keyID: body.keyId, session: try await session())
        return .created(.init(body: .json(challenge(issued))))
    }

    func authorizePaymentWithBiometrics(
        _ input: Operations.AuthorizePaymentWithBiometrics.Input
    ) async throws
        -> Operations.AuthorizePaymentWithBiometrics.Output
    {
        guard case .json(let body) = input.body else { throw APIError(.malformedRequest, "Send JSON.") }
        let payment = try await counted(
            { service.metrics.paymentAuthorization(.biometric, outcome: $0) },
            {
                try await service.authorizeWithBiometrics(
                    input.path.paymentId,
                    challengeID: body.challengeId,
                    keyID: body.keyId,
                    counter: body.counter,
                    transactionHash: body.transactionHash,
                    signature: body.signature,
                    appAttestAssertion: body.appAttestAssertion,
                    session: try await session()
                )
            }
        )
        return .ok(.init(body: .json(try Self.payment(payment))))
    }

    func authorizePaymentWithPIN(_ input: Operations.AuthorizePaymentWithPIN.Input) async throws -> Operations.AuthorizePaymentWithPIN.Output {
        guard case .json(let body) = input.body else { throw APIError(.malformedRequest, "Send JSON.") }
        let payment = try await counted(
            { service.metrics.paymentAuthorization(.pin, outcome: $0) },
            {
                try await service.authorizeWithPIN(input.path.paymentId, pin: body.pin, session: try await session())
            }
        )
        return .ok(.init(body: .json(try Self.payment(payment))))
    }

    func cancelPayment(_ input: Operations.CancelPayment.Input) async throws -> Operations.CancelPayment.Output {
        .ok(.init(body: .json(try Self.payment(try await service.cancelPayment(input.path.paymentId, session: try await session())))))
    }

    func createPaymentPINChallenge(
        _ input: Operations.CreatePaymentPINChallenge.Input
    ) async throws
        -> Operations.CreatePaymentPINChallenge.Output
    {
        guard case .json(let body) = input.body else { throw APIError(.malformedRequest, "Send JSON.") }
        return .created(.init(body: .json(challenge(try await service.createPaymentPINChallenge(keyID: body.keyId, session: try await session())))))
    }

    func setPaymentPIN(_ input: Operations.SetPaymentPIN.Input) async throws -> Operations.SetPaymentPIN.Output {
        guard case .json(let body) = input.body else { throw APIError(.malformedRequest, "Send JSON.") }
        let session = try await session()
        let proof = try body.biometric.map {
            try BiometricProof(challengeID: $0.challengeId, keyID: $0.keyId, counter: $0.counter, signature: $0.signature)
        }
        try await service.setPaymentPIN(body.pin, currentPassword: body.currentPassword, biometric: proof, session: session)
        return .noContent(.init())
    }

    func listReceiptKeys(_ input: Operations.ListReceiptKeys.Input) async throws -> Operations.ListReceiptKeys.Output {
        .ok(
            .init(
                body: .json(
                    .init(
                        keys: try await service.receiptKeys().map { key in
                            .init(
                                keyId: Base64URL.encode(key.publicKey.keyID),
                                publicKey: Base64URL.encode(key.publicKey.x963Representation),
                                algorithm: .es256,
                                notBefore: key.notBefore,
                                retiredAt: key.retiredAt
                            )
                        }
                    )
                )
            )
        )
    }

    // MARK: Approvals

    func listApprovals(_ input: Operations.ListApprovals.Input) async throws -> Operations.ListApprovals.Output {
        let limit = input.query.limit ?? 50
        guard (1...200).contains(limit) else { throw APIError(.malformedRequest, "limit must be 1-200.") }
        let status = input.query.status.flatMap { ApprovalInfo.Status(rawValue: $0.rawValue) }
        let approvals = try await service.approvals(session: try await session(), status: status, limit: limit)
        return .ok(.init(body: .json(.init(approvals: approvals.map(approval)))))
    }

    func getApproval(_ input: Operations.GetApproval.Input) async throws -> Operations.GetApproval.Output {
        .ok(.init(body: .json(approval(try await service.approval(input.path.approvalId, session: try await session())))))
    }

    func approveApproval(_ input: Operations.ApproveApproval.Input) async throws -> Operations.ApproveApproval.Output {
        guard case .json(let body) = input.body else { throw APIError(.malformedRequest, "Send JSON.") }
        let approval = try await service.approve(
            input.path.approvalId,
            keyID: body.keyId,
            counter: body.counter,
            number: body.number,
            approvalHash: body.approvalHash,
            signature: body.signature,
            appAttestAssertion: body.appAttestAssertion,
            session: try await session()
        )
        return .ok(.init(body: .json(self.approval(approval))))
    }

    func denyApproval(_ input: Operations.DenyApproval.Input) async throws -> Operations.DenyApproval.Output {
        .ok(.init(body: .json(approval(try await service.deny(input.path.approvalId, session: try await session())))))
    }

    func createQRSignIn(_ input: Operations.CreateQRSignIn.Input) async throws -> Operations.CreateQRSignIn.Output {
        let issued = try await service.createQRSignIn()
        // Only this browser collects the session: the cookie goes back with the page's requests to /v1/qr-sign-ins only.
        let secure = issued.url.hasPrefix("https://") ? "; Secure" : ""
        CookieMiddleware.responseCookies?.add(
            "\(BioAuthService.qrCookieName)=\(issued.browserCookie); Path=/v1/qr-sign-ins; HttpOnly; SameSite=Strict; Max-Age=600\(secure)"
        )
        return .created(
            .init(
                headers: .init(cacheControl: .noStore),
                body: .json(
                    .init(qrSignInId: issued.id, url: issued.url, svg: issued.svg, matchNumber: issued.matchNumber, expiresAt: issued.expiresAt)
                )
            )
        )
    }

    func getQRSignInSession(_ input: Operations.GetQRSignInSession.Input) async throws -> Operations.GetQRSignInSession.Output {
        guard case .json(let body) = input.body else { throw APIError(.malformedRequest, "Send JSON.") }
        let state = try await service.qrSignInState(
            input.path.qrSignInId,
            browserCookie: CookieMiddleware.cookie(BioAuthService.qrCookieName),
            installationID: body.installationId
        )
        return .ok(
            .init(
                headers: .init(cacheControl: .noStore),
                body: .json(.init(status: .init(rawValue: state.status.rawValue) ?? .waiting, tokens: state.tokens.map(Self.tokens)))
            )
        )
    }

    func scanQRSignIn(_ input: Operations.ScanQRSignIn.Input) async throws -> Operations.ScanQRSignIn.Output {
        guard case .json(let body) = input.body else { throw APIError(.malformedRequest, "Send JSON.") }
        return .created(.init(body: .json(approval(try await service.scanQRSignIn(body.url, session: try await session())))))
    }

    /// A request as the phone sees it: never the number the channel shows, only the three to pick from.
    func approval(_ approval: ApprovalInfo) -> Components.Schemas.Approval {
        let channel = approval.channel
        return .init(
            approvalId: approval.id,
            kind: approval.kind == .signIn ? .signIn : .operation,
            requester: approval.requester,
            bindingMessage: approval.bindingMessage,
            channel: channel == .unknown
                ? nil
                : .init(
                    browser: channel.browser.isEmpty ? nil : channel.browser,
                    platform: channel.platform.isEmpty ? nil : channel.platform,
                    address: channel.address.isEmpty ? nil : channel.address
                ),
            numberChoices: approval.numberChoices.isEmpty ? nil : approval.numberChoices,
            challenge: Base64URL.encode(approval.challenge),
            relyingPartyId: service.configuration.relyingPartyID,
            status: Components.Schemas.Approval.StatusPayload(rawValue: approval.status.rawValue) ?? .pending,
            createdAt: approval.createdAt,
            createdAtMs: approval.createdAt.millisecondsSince1970,
            expiresAt: approval.expiresAt,
            answeredAt: approval.answeredAt,
            deviceId: approval.deviceID,
            denyReason: approval.denyReason.flatMap { .init(rawValue: $0) },
            signedApproval: approval.signedApproval.map(Self.signedApproval)
        )
    }

    /// A signed approval as the wire carries it.
    static func signedApproval(_ signed: SignedApproval) -> Components.Schemas.SignedApproval {
        .init(
            version: signed.version,
            approvalId: signed.approvalId,
            accountId: signed.accountId,
            kind: signed.kind == CanonicalApproval.Kind.signIn.rawValue ? .signIn : .operation,
            requester: signed.requester,
            bindingMessage: signed.bindingMessage,
            channelBrowser: signed.channelBrowser,
            channelPlatform: signed.channelPlatform,
            channelAddress: signed.channelAddress,
            number: signed.number,
            createdAtMs: signed.createdAtMs,
            deviceKeyId: signed.deviceKeyId,
            amr: signed.amr,
            approvedAtMs: signed.approvedAtMs,
            keyId: signed.keyId,
            signature: signed.signature
        )
    }

    // MARK: Service clients

    func issueServiceToken(_ input: Operations.IssueServiceToken.Input) async throws -> Operations.IssueServiceToken.Output {
        guard case .urlEncodedForm(let form) = input.body else {
            throw APIError(.malformedRequest, "Send a form (application/x-www-form-urlencoded).")
        }
        guard (form.scope?.utf8.count ?? 0) <= 512 else { throw APIError(.malformedRequest, "scope is longer than 512 bytes.") }
        let credentials = BearerTokenMiddleware.clientCredentials
        if form.grantType == Self.cibaGrant {
            let redeemed = try await service.redeemApproval(clientID: credentials?.id, secret: credentials?.secret, authRequestID: form.authReqId)
            return .ok(
                .init(
                    headers: .init(cacheControl: .noStore),
                    body: .json(
                        .init(
                            accessToken: redeemed.tokens?.accessToken,
                            tokenType: .bearer,
                            expiresIn: redeemed.tokens.map { Int($0.accessTokenExpiresAt.timeIntervalSince(service.now).rounded()) },
                            refreshToken: redeemed.tokens?.refreshToken,
                            signedApproval: Self.signedApproval(redeemed.approval)
                        )
                    )
                )
            )
        }
        let issued = try await service.issueServiceToken(
            clientID: credentials?.id,
            secret: credentials?.secret,
            grantType: form.grantType,
            scope: form.scope
        )
        return .ok(
            .init(
                headers: .init(cacheControl: .noStore),
                body: .json(
                    .init(
                        accessToken: issued.accessToken,
                        tokenType: .bearer,
                        expiresIn: issued.expiresIn,
                        scope: issued.scopes.joined(separator: " ")
                    )
                )
            )
        )
    }

    /// OpenID CIBA's grant type at the token endpoint.
    static let cibaGrant = "urn:openid:params:grant-type:ciba"

    func backchannelAuthorize(_ input: Operations.BackchannelAuthorize.Input) async throws -> Operations.BackchannelAuthorize.Output {
        guard case .urlEncodedForm(let form) = input.body else {
            throw APIError(.malformedRequest, "Send a form (application/x-www-form-urlencoded).")
        }
        let credentials = BearerTokenMiddleware.clientCredentials
        let issued = try await service.requestApproval(clientID: credentials?.id, secret: credentials?.secret) {
            // Read once the client is authenticated: without its credentials, the request is invalid_client whatever it holds.
            guard form.scope.utf8.count <= 512 else { throw APIError(.malformedRequest, "scope is longer than 512 bytes.") }
            return try ApprovalRequest(
                scope: form.scope,
                loginHint: form.loginHint,
                idTokenHint: form.idTokenHint,
                loginHintToken: form.loginHintToken,
                bindingMessage: form.bindingMessage,
                requestedExpiry: form.requestedExpiry,
                notificationToken: form.clientNotificationToken
            )
        }
        return .ok(
            .init(
                headers: .init(cacheControl: .noStore),
                body: .json(
                    .init(authReqId: issued.authRequestID, expiresIn: issued.expiresIn, interval: issued.interval, matchNumber: issued.matchNumber)
                )
            )
        )
    }

    func introspectToken(_ input: Operations.IntrospectToken.Input) async throws -> Operations.IntrospectToken.Output {
        _ = try serviceClient()
        guard case .urlEncodedForm(let form) = input.body else {
            throw APIError(.malformedRequest, "Send a form (application/x-www-form-urlencoded).")
        }
        guard form.token.utf8.count <= 512 else { throw APIError(.malformedRequest, "token is longer than 512 bytes.") }
        let found = try await service.introspect(form.token)
        return .ok(
            .init(
                body: .json(
                    .init(
                        active: found.active,
                        tokenType: found.tokenType.flatMap { .init(rawValue: $0) },
                        sub: found.subject,
                        username: found.username,
                        sid: found.sessionID,
                        exp: found.expiresAt.map { Int64($0.timeIntervalSince1970) },
                        iat: found.issuedAt.map { Int64($0.timeIntervalSince1970) },
                        clientId: found.clientID,
                        scope: found.scope,
                        amr: found.methods,
                        deviceId: found.deviceID,
                        appAttest: found.appAttested,
                        passkeyId: found.passkeyID
                    )
                )
            )
        )
    }

    func registerPayee(_ input: Operations.RegisterPayee.Input) async throws -> Operations.RegisterPayee.Output {
        let client = try serviceClient()
        guard case .json(let body) = input.body else { throw APIError(.malformedRequest, "Send JSON.") }
        let (payee, created) = try await service.registerPayee(
            id: body.payeeId,
            name: body.name,
            verification: body.verification.rawValue,
            client: client
        )
        let wire = Components.Schemas.Payee(
            payeeId: payee.id,
            name: payee.name,
            verification: .init(rawValue: payee.verification.rawValue) ?? .unverified,
            createdAt: payee.createdAt,
            updatedAt: payee.updatedAt
        )
        return created ? .created(.init(body: .json(wire))) : .ok(.init(body: .json(wire)))
    }

    func createServicePayment(_ input: Operations.CreateServicePayment.Input) async throws -> Operations.CreateServicePayment.Output {
        let client = try serviceClient()
        guard case .json(let body) = input.body else { throw APIError(.malformedRequest, "Send JSON.") }
        let payment = try await service.createServicePayment(
            account: body.accountId,
            amountMinor: body.amountMinor,
            currency: body.currency,
            payeeID: body.payeeId,
            memo: body.memo,
            idempotencyKey: input.headers.idempotencyKey,
            client: client
        )
        return .created(.init(body: .json(try Self.payment(payment))))
    }

    // MARK: Webhooks

    func createWebhookEndpoint(_ input: Operations.CreateWebhookEndpoint.Input) async throws -> Operations.CreateWebhookEndpoint.Output {
        let client = try serviceClient()
        guard case .json(let body) = input.body else { throw APIError(.malformedRequest, "Send JSON.") }
        let (endpoint, secret) = try await service.createWebhookEndpoint(url: body.url, events: body.events, client: client)
        return .created(
            .init(
                body: .json(
                    .init(
                        endpointId: endpoint.id,
                        url: endpoint.url,
                        events: endpoint.events,
                        createdAt: endpoint.createdAt,
                        secret: secret
                    )
                )
            )
        )
    }

    func listWebhookEndpoints(_ input: Operations.ListWebhookEndpoints.Input) async throws -> Operations.ListWebhookEndpoints.Output {
        let client = try serviceClient()
        return .ok(
            .init(
                body: .json(
                    .init(
                        endpoints: try await service.webhookEndpoints(client: client).map { endpoint in
                            .init(
                                endpointId: endpoint.id,
                                url: endpoint.url,
                                events: endpoint.events,
                                createdAt: endpoint.createdAt,
                                previousSecretExpiresAt: endpoint.previousSecretExpiresAt
                            )
                        }
                    )
                )
            )
        )
    }

    func deleteWebhookEndpoint(_ input: Operations.DeleteWebhookEndpoint.Input) async throws -> Operations.DeleteWebhookEndpoint.Output {
        let client = try serviceClient()
        try await service.deleteWebhookEndpoint(input.path.endpointId, client: client)
        return .noContent(.init())
    }

    func rotateWebhookSecret(_ input: Operations.RotateWebhookSecret.Input) async throws -> Operations.RotateWebhookSecret.Output {
        let client = try serviceClient()
        let rotated = try await service.rotateWebhookSecret(input.path.endpointId, client: client)
        return .ok(
            .init(
                body: .json(
                    .init(
                        endpointId: input.path.endpointId,
                        secret: rotated.secret,
                        previousSecretExpiresAt: rotated.previousExpiresAt
                    )
                )
            )
        )
    }

    func listWebhookDeliveries(_ input: Operations.ListWebhookDeliveries.Input) async throws -> Operations.ListWebhookDeliveries.Output {
        let client = try serviceClient()
        let limit = input.query.limit ?? 50
        guard (1...200).contains(limit) else { throw APIError(.malformedRequest, "limit must be 1-200.") }
        let deliveries = try await service.webhookDeliveries(input.path.endpointId, limit: limit, client: client)
        return .ok(
            .init(
                body: .json(
                    .init(
                        deliveries: deliveries.map { delivery in
                            .init(
                                eventId: delivery.eventID,
                                eventType: delivery.eventType,
                                status: .init(rawValue: delivery.status) ?? .pending,
                                attempts: delivery.attempts,
                                lastStatusCode: delivery.lastStatusCode,
                                lastError: delivery.lastError,
                                createdAt: delivery.createdAt,
                                nextAttemptAt: delivery.nextAttemptAt,
                                deliveredAt: delivery.deliveredAt
                            )
                        }
                    )
                )
            )
        )
    }

    // MARK: Audit

    func listAuditEvents(_ input: Operations.ListAuditEvents.Input) async throws -> Operations.ListAuditEvents.Output {
        let limit = input.query.limit ?? 50
        guard (1...200).contains(limit) else { throw APIError(.malformedRequest, "limit must be 1-200.") }
        let before = try input.query.before.map(AuditCursor.init(parsing:))
        let page = try await service.auditEvents(account: try await session().accountID, limit: limit, before: before)
        return .ok(
            .init(
                body: .json(
                    .init(
                        events: page.events.map { event in
                            .init(
                                eventId: event.id,
                                occurredAt: event.occurredAt,
                                kind: event.kind,
                                outcome: event.succeeded ? .success : .failure,
                                accountId: event.accountID,
                                deviceId: event.deviceID,
                                sessionId: event.sessionID,
                                code: event.code,
                                operatorId: event.operatorID,
                                reason: event.reason,
                                passkeyId: event.passkeyID
                            )
                        },
                        next: page.next?.text
                    )
                )
            )
        )
    }

    // MARK: Metrics

    /// Runs `body` and reports how it ended to `record`: `success`, or the problem code it failed with.
    private func counted<R>(_ record: (String) -> Void, _ body: () async throws -> R) async throws -> R {
        do {
            let result = try await body()
            record("success")
            return result
        } catch let error as APIError {
            record(error.code.rawValue)
            throw error
        } catch {
            record(ProblemCode.internalError.rawValue)
            throw error
        }
    }

    // MARK: Mapping

    private static func tokens(_ tokens: IssuedTokens) -> Components.Schemas.SessionTokens {
        .init(
            sessionId: tokens.sessionID,
            accountId: tokens.accountID,
            tokenType: .bearer,
            accessToken: tokens.accessToken,
            accessTokenExpiresAt: tokens.accessTokenExpiresAt,
            refreshToken: tokens.refreshToken,
            refreshTokenExpiresAt: tokens.refreshTokenExpiresAt
        )
    }

    /// The wire form of an issued challenge (each one counted by purpose).
    private func challenge(_ challenge: IssuedChallenge) -> Components.Schemas.Challenge {
        service.metrics.challengeIssued(challenge.purpose.rawValue)
        return .init(
            challengeId: challenge.id,
            challenge: Base64URL.encode(challenge.challenge),
            purpose: Components.Schemas.Challenge.PurposePayload(rawValue: challenge.purpose.rawValue) ?? .login,
            relyingPartyId: service.configuration.relyingPartyID,
            keyId: challenge.keyID.map(Base64URL.encode),
            paymentId: challenge.paymentID,
            expiresAt: challenge.expiresAt
        )
    }

    /// The wire enum and ``BioAuthCore/BiometryKind`` share raw values.
    private static func kind(_ kind: Components.Schemas.BiometryKind) throws -> BiometryKind {
        guard let kind = BiometryKind(rawValue: kind.rawValue) else { throw APIError(.malformedRequest, "Unknown biometryKind.") }
        return kind
    }

    private static func payment(_ payment: PaymentInfo) throws -> Components.Schemas.Payment {
        guard let status = Components.Schemas.Payment.StatusPayload(rawValue: payment.status.rawValue),
            let currency = Currency(code: payment.currency)
        else { throw APIError.internalError }
        return .init(
            paymentId: payment.id,
            status: status,
            amountMinor: payment.amountMinor,
            currency: payment.currency,
            currencyExponent: currency.minorUnitExponent,
            payeeId: payment.payeeID,
            payeeName: payment.payeeName,
            payeeVerified: payment.payeeVerified,
            memo: payment.memo,
            transactionHash: Base64URL.encode(try payment.transaction().hash),
            failedAttempts: payment.failedAttempts,
            createdAt: payment.createdAt,
            expiresAt: payment.expiresAt,
            authorizedAt: payment.authorizedAt,
            authorizationMethod: payment.authorizationMethod.flatMap { .init(rawValue: $0) },
            deviceId: payment.deviceID,
            receipt: payment.receipt.map { receipt in
                .init(
                    version: receipt.version,
                    paymentId: receipt.paymentId,
                    accountId: receipt.accountId,
                    amountMinor: receipt.amountMinor,
                    currency: receipt.currency,
                    currencyExponent: receipt.currencyExponent,
                    payeeId: receipt.payeeId,
                    payeeName: receipt.payeeName,
                    method: receipt.method,
                    authorizedAtMs: receipt.authorizedAtMs,
                    keyId: receipt.keyId,
                    signature: receipt.signature
                )
            }
        )
    }

    private static func device(_ device: DeviceInfo) throws -> Components.Schemas.Device {
        // Registration accepts only the wire's kinds, so every stored kind has a wire value.
        guard let kind = Components.Schemas.BiometryKind(rawValue: device.biometryKind.rawValue) else { throw APIError.internalError }
        return .init(
            deviceId: device.id,
            keyId: Base64URL.encode(device.publicKey.keyID),
            biometryKind: kind,
            deviceName: device.name,
            installationId: device.installationID,
            counter: device.counter,
            attestation: device.attestation == "apple-appattest" ? .appleAppattest : Components.Schemas.Device.AttestationPayload.none,
            createdAt: device.createdAt,
            lastUsedAt: device.lastUsedAt,
            revokedAt: device.revokedAt
        )
    }
}
