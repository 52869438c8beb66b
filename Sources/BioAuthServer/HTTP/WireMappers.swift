import BioAuthCore
import Foundation

// The wire forms of what the service returns: initializers on the types generated from the contract, so that a
// handler says `.json(.init(payment))`. Each maps fields and decides nothing.

extension Components.Schemas.PasskeyCredentialDescriptor {
    /// A credential a passkey ceremony allows or excludes.
    init(_ descriptor: PasskeyDescriptor) {
        self.init(_type: .publicKey, id: Base64URL.encode(descriptor.id), transports: descriptor.transports.isEmpty ? nil : descriptor.transports)
    }
}

extension Components.Schemas.Passkey {
    /// A passkey of the account.
    init(_ passkey: PasskeyInfo) {
        self.init(
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
}

extension Components.Schemas.Approval {
    /// A request as the phone sees it: never the number the channel shows, only the three to pick from.
    init(_ approval: ApprovalInfo, relyingPartyID: String) {
        let channel = approval.channel
        self.init(
            approvalId: approval.id,
            kind: .init(rawValue: approval.kind.rawValue) ?? .operation,
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
            relyingPartyId: relyingPartyID,
            status: Components.Schemas.Approval.StatusPayload(rawValue: approval.status.rawValue) ?? .pending,
            createdAt: approval.createdAt,
            createdAtMs: approval.createdAt.millisecondsSince1970,
            expiresAt: approval.expiresAt,
            answeredAt: approval.answeredAt,
            deviceId: approval.deviceID,
            denyReason: approval.denyReason.flatMap { .init(rawValue: $0) },
            signedApproval: approval.signedApproval.map(Components.Schemas.SignedApproval.init)
        )
    }
}

extension Components.Schemas.SignedApproval {
    /// A signed approval as the wire carries it.
    init(_ signed: SignedApproval) {
        self.init(
            version: signed.version,
            approvalId: signed.approvalId,
            accountId: signed.accountId,
            kind: .init(rawValue: signed.kind) ?? .operation,
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
}

extension Components.Schemas.SessionTokens {
    /// The tokens of a session that began.
    init(_ tokens: IssuedTokens) {
        self.init(
            sessionId: tokens.sessionID,
            accountId: tokens.accountID,
            tokenType: .bearer,
            accessToken: tokens.accessToken,
            accessTokenExpiresAt: tokens.accessTokenExpiresAt,
            refreshToken: tokens.refreshToken,
            refreshTokenExpiresAt: tokens.refreshTokenExpiresAt
        )
    }
}

extension Components.Schemas.Challenge {
    /// An issued challenge, with the relying party its payload names.
    init(_ challenge: IssuedChallenge, relyingPartyID: String) {
        self.init(
            challengeId: challenge.id,
            challenge: Base64URL.encode(challenge.challenge),
            purpose: Components.Schemas.Challenge.PurposePayload(rawValue: challenge.purpose.rawValue) ?? .login,
            relyingPartyId: relyingPartyID,
            keyId: challenge.keyID.map(Base64URL.encode),
            paymentId: challenge.paymentID,
            expiresAt: challenge.expiresAt
        )
    }
}

extension Components.Schemas.Payment {
    /// A payment, with the hash of its canonical transaction and its receipt once authorized.
    init(_ payment: PaymentInfo) throws {
        guard let status = Components.Schemas.Payment.StatusPayload(rawValue: payment.status.rawValue),
            let currency = Currency(code: payment.currency)
        else { throw APIError.internalError }
        self.init(
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
}

extension Components.Schemas.Device {
    /// A bound device.
    init(_ device: DeviceInfo) throws {
        // Registration accepts only the wire's kinds, so every stored kind has a wire value.
        guard let kind = Components.Schemas.BiometryKind(rawValue: device.biometryKind.rawValue) else { throw APIError.internalError }
        self.init(
            deviceId: device.id,
            keyId: Base64URL.encode(device.publicKey.keyID),
            biometryKind: kind,
            deviceName: device.name,
            installationId: device.installationID,
            counter: device.counter,
            attestation: device.attestation == "apple-appattest" ? .appleAppattest : Components.Schemas.Device.AttestationPayload.none,
            createdAt: device.createdAt,
            lastUsedAt: device.lastUsedAt,
            revokedAt: device.revokedAt,
            boundBy: .init(rawValue: device.boundBy.rawValue) ?? .password,
            coolingOffUntil: device.coolingOffUntil
        )
    }
}

extension BiometryKind {
    /// The wire enum and ``BioAuthCore/BiometryKind`` share raw values.
    init(_ kind: Components.Schemas.BiometryKind) throws {
        guard let kind = BiometryKind(rawValue: kind.rawValue) else { throw APIError(.malformedRequest, "Unknown biometryKind.") }
        self = kind
    }
}
