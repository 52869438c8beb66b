import BioAuthCore
import Foundation
import SQLKit

/// What a registration brings, beyond its session, to bind its key (docs/PROTOCOL.md, "Binding a device").
enum BindingEvidence: Sendable, Equatable {
    /// Nothing: enough only for an account's first device, where the deployment binds it by password.
    case none
    /// A `bind_device` request a device of the account approved for this key and this session.
    case approval(id: String)
    /// A binding code the bank's backend asked for.
    case code(String)
    /// One of the customer's own recovery codes (``BioAuthService/createRecoveryCodes(session:)``): a lost phone's way
    /// back without the bank.
    case recoveryCode(String)

    /// The evidence a registration's body names; more than one is refused.
    init(approvalID: String?, bindingCode: String?, recoveryCode: String? = nil) throws {
        switch (approvalID, bindingCode, recoveryCode) {
        case (nil, nil, nil): self = .none
        case (let id?, nil, nil): self = .approval(id: id)
        case (nil, let code?, nil): self = .code(code)
        case (nil, nil, let code?): self = .recoveryCode(code)
        default: throw APIError(.malformedRequest, "Send one of approvalId, bindingCode and recoveryCode, not several.")
        }
    }
}

/// A binding code as the bank's backend receives it, once.
struct IssuedBindingCode: Sendable {
    var code: String
    var accountID: String
    var expiresAt: Date
    var purpose: BindingCode.Purpose
}

/// How a registration's key binds, by the policy.
struct BindingDecision: Sendable {
    var binding: DeviceInfo.Binding
    /// The end of its cooling-off, for a device bound by a password alone.
    var coolingOffUntil: Date?
    /// A lost phone's code: the new device replaces every other device, passkey and session of the account.
    var recovers = false
}

/// A `bind_device` request as the new device receives it: the number it shows, which the customer picks on the device
/// that approves.
struct IssuedBindingApproval: Sendable {
    var approval: ApprovalInfo
    var matchNumber: Int
}

extension BioAuthService {
    /// The deployment's binding policy.
    var bindingPolicy: BindingPolicy { configuration.binding }

    // MARK: Binding codes

    /// A binding code for `account`, asked for by the bank's backend (scope `bindings:write`) after its own check of the
    /// customer: 25 characters of Crockford base32 (125 random bits), single use, for ``BindingPolicy/codeLifetime``.
    /// Only its SHA-256 is stored; the code is in this answer and nowhere else (no log, audit detail or webhook). A
    /// `recovery` code is for a customer who lost their phone: the device it binds replaces every other.
    func issueBindingCode(
        account rawAccount: String,
        purpose: BindingCode.Purpose = .bind,
        client: AuthenticatedService
    ) async throws -> IssuedBindingCode {
        guard (1...128).contains(rawAccount.utf8.count) else { throw APIError(.accountNotFound, "There is no such account.") }
        let lifetime = bindingPolicy.codeLifetime
        return try await commit { db in
            var found = try await db.accounts.find(idOrUsername: rawAccount)
            if found == nil { found = try await db.accounts.find(idOrUsername: rawAccount.lowercased()) }
            guard let account = found else { throw Refusal(APIError(.accountNotFound, "There is no such account.")) }
            return try await recorder.issueCode(account: account.id, purpose: purpose, lifetime: lifetime, client: client.clientID, on: db)
        }
    }

    /// The stored form of a binding code: SHA-256 of its canonical form (``BindingCodeText/canonical(_:)``).
    static func bindingCodeHash(_ code: String) -> String { tokenHash(code) }

    // MARK: Approval on a bound device

    /// A `bind_device` request: the new device, signed in on this account, asks the account's bound devices to approve its
    /// key. The request shows the new device's name and biometry and where it asks from; the new device shows the
    /// number the customer must pick on the bound device. Refused when the account has no bound device (nothing could
    /// approve), the key is bound already, or the customer has as many requests waiting as allowed.
    func requestBindingApproval(
        keyID rawKeyID: String,
        name rawName: String,
        biometryKind: BiometryKind,
        session: AuthenticatedSession
    ) async throws -> IssuedBindingApproval {
        let keyID = try Validation.bytes(rawKeyID, field: "keyId", length: 32)
        let name = try Validation.deviceName(rawName)
        let policy = configuration.approvals
        let match = randomNumber(in: 10...99)
        let choices = numberChoices(around: match)
        let agent = UserAgentSummary(caller.userAgent ?? "")
        let address = caller.address ?? ""
        return try await commit { db in
            guard try await db.devices.hasLive(account: session.accountID, attestedOnly: configuration.appAttest.mode == .require) else {
                throw Refusal(
                    APIError(.noBoundDevice, "This account has no device that could approve another. Turn on biometric sign-in directly.")
                )
            }
            if try await db.devices.isRegistered(keyID: keyID) {
                throw Refusal(APIError(.keyAlreadyRegistered, "This key is registered already."))
            }
            try await countApprovalRequest(account: session.accountID, on: db)
            let approval = ApprovalInfo(
                id: newID(),
                accountID: session.accountID,
                kind: .bindDevice,
                clientID: nil,
                requester: configuration.passkeys.relyingPartyName,
                bindingMessage: "\(name) · \(biometryKind.productName)",
                channel: .init(browser: "", platform: agent.platform, address: address),
                matchNumber: match,
                numberChoices: choices,
                challenge: random.bytes(32),
                status: .pending,
                createdAt: now,
                expiresAt: now.addingTimeInterval(policy.lifetime),
                deliveryMode: .poll,
                pollInterval: 2,
                binding: .init(sessionID: session.sessionID, keyID: keyID)
            )
            try await db.approvals.insert(approval, authRequestHash: nil)
            try await recorder.audit(.approvalRequested, succeeded: true, account: session.accountID, session: session.sessionID, on: db)
            try await recorder.emit(.approvalRequested, .init(approval: approval), on: db)
            return IssuedBindingApproval(approval: approval, matchNumber: match)
        }
    }

    // MARK: The policy

    /// How the key `keyID` of a registration in `session` binds, by the policy and the `evidence`: the binding and the end
    /// of its cooling-off, or a refusal (audited as a failed `device_registered`, nothing else written, the evidence
    /// left unused). An approval or a code is used up here, in the registration's unit of work.
    func decideBinding(
        _ evidence: BindingEvidence,
        keyID: Data,
        device: String,
        session: AuthenticatedSession,
        refusals: ProofRefusals,
        on db: any SQLDatabase
    ) async throws -> BindingDecision {
        func refuse(_ error: APIError) async throws -> Never {
            throw Refusal(try await record(error, device: nil, account: session.accountID, refusals, on: db))
        }
        switch evidence {
        case .none:
            // Under App Attest's require, a device bound before without an App Attest key can prove nothing: it does not
            // count, and the app, updated, binds an attested key by the first device's rule.
            if try await db.devices.hasLive(account: session.accountID, attestedOnly: configuration.appAttest.mode == .require) {
                try await refuse(
                    APIError(
                        .deviceBindingRequired,
                        "This account has a device already: approve this one on it, or use a binding code from the bank."
                    )
                )
            }
            guard bindingPolicy.firstDevice == .password else {
                try await refuse(APIError(.deviceBindingRequired, "This bank binds a first device only with a binding code it gives you."))
            }
            let coolingOff = bindingPolicy.coolingOff
            return BindingDecision(binding: .password, coolingOffUntil: coolingOff > 0 ? now.addingTimeInterval(coolingOff) : nil)
        case .approval(let id):
            let invalid = APIError(
                .bindingApprovalInvalid,
                "This approval does not bind this key: it is not approved, was used, or was asked for another key or session."
            )
            guard Validation.isIssuedID(id), let approval = try await db.approvals.find(id, account: session.accountID),
                approval.kind == .bindDevice, approval.status == .approved, !approval.redeemed,
                approval.binding == .init(sessionID: session.sessionID, keyID: keyID),
                let approver = approval.deviceID, let approving = try await db.devices.find(approver, account: session.accountID),
                approving.revokedAt == nil
            else { try await refuse(invalid) }
            guard try await db.approvals.markRedeemed(approval.id, at: now.millisecondsSince1970) else { try await refuse(invalid) }
            return BindingDecision(binding: .approval)
        case .code(let raw):
            try await countCodeAttempt("binding-code", account: session.accountID, on: db)
            // An unknown code, another account's, a used or an expired one: one statement, one answer.
            guard let canonical = BindingCodeText.canonical(raw),
                let used = try await db.bindingCodes.use(
                    codeHash: Self.bindingCodeHash(canonical),
                    account: session.accountID,
                    purposes: [.bind, .recovery],
                    device: device,
                    at: now.millisecondsSince1970
                )
            else {
                try await refuse(
                    APIError(.bindingCodeInvalid, "This binding code is not valid for this account: it may be mistyped, used or expired.")
                )
            }
            return BindingDecision(binding: .bindingCode, recovers: used.purpose == .recovery)
        case .recoveryCode(let raw):
            try await countCodeAttempt("recovery-code", account: session.accountID, on: db)
            guard let canonical = RecoveryCodeText.canonical(raw),
                try await db.bindingCodes.use(
                    codeHash: recoveryCodeHash(canonical),
                    account: session.accountID,
                    purposes: [.customerRecovery],
                    device: device,
                    at: now.millisecondsSince1970
                ) != nil
            else {
                try await refuse(APIError(.bindingCodeInvalid, "This recovery code is not valid for this account: it may be mistyped or used."))
            }
            return BindingDecision(binding: .recoveryCode, recovers: true)
        }
    }

    /// Counts a code tried, before it is looked at, right or wrong: per client address, and per account when one is
    /// named (`bucket` keeps binding and reset codes apart). Apart from the password's failures, so a flood of codes never
    /// locks the customer's password.
    func countCodeAttempt(_ bucket: String, account: String?, on db: any SQLDatabase) async throws {
        try await rateLimit(
            bucket + "-address:" + (caller.address ?? "unknown"),
            name: .bindingCodeAddress,
            limit: bindingPolicy.attemptsPerAddress,
            window: bindingPolicy.attemptWindow,
            on: db
        )
        guard let account else { return }
        try await rateLimit(
            bucket + "-account:" + account,
            name: .bindingCodeAccount,
            limit: bindingPolicy.attemptsPerAccount,
            window: bindingPolicy.attemptWindow,
            on: db
        )
    }

    /// A lost phone's recovery, in the unit of work that bound `device`: every other device, passkey and session of the
    /// account is revoked or ended (refused at once, on every instance: they are rows of the one database), the account's
    /// other unused binding codes are void (a concurrent recovery with one of them binds nothing), and it is audited and
    /// sent to the bank's webhooks as `account.recovered`.
    func recover(_ account: String, device: DeviceInfo, session: AuthenticatedSession, on db: any SQLDatabase) async throws {
        try await db.bindingCodes.voidUnused(account: account, at: now.millisecondsSince1970)
        for other in try await db.devices.list(account: account) where other.id != device.id && other.revokedAt == nil {
            try await recorder.revoke(other, keeping: session.sessionID, on: db)
        }
        for passkey in try await db.passkeys.list(account: account, liveOnly: true) {
            try await recorder.revoke(passkey, keeping: session.sessionID, on: db)
        }
        try await recorder.endSessions(account: account, keeping: session.sessionID, reason: "account_recovered", on: db)
        try await recorder.audit(.accountRecovered, succeeded: true, account: account, device: device.id, session: session.sessionID, on: db)
        try await recorder.emit(.accountRecovered, .init(device: device), on: db)
    }

    /// Refuses what a device in its cooling-off may not do yet, with the seconds until it may (`Retry-After`).
    func refuseCoolingOff(_ device: DeviceInfo, _ what: String) -> APIError {
        let seconds = max(1, Int(((device.coolingOffUntil ?? now).timeIntervalSince(now)).rounded(.up)))
        return APIError(
            .deviceCoolingOff,
            "This device was bound recently with a password alone: \(what) until its cooling-off ends in \(seconds) seconds.",
            retryAfter: seconds
        )
    }
}

extension ChangeRecorder {
    /// A new one-time code for `account` (binding, recovery or password reset), good for `lifetime`: stored as its hash,
    /// audited (with the service client that asked, or the operator and reason of a support action), and returned once.
    /// The bank's backend and the support desk issue codes alike.
    func issueCode(
        account: String,
        purpose: BindingCode.Purpose,
        lifetime: TimeInterval,
        client: String? = nil,
        by action: SupportAction? = nil,
        on db: any SQLDatabase
    ) async throws -> IssuedBindingCode {
        let code = BindingCodeText.make(random.bytes(16))
        let stored = BindingCode(
            id: newID(),
            accountID: account,
            clientID: client,
            createdAt: now,
            expiresAt: now.addingTimeInterval(lifetime),
            purpose: purpose
        )
        try await db.bindingCodes.insert(stored, codeHash: BioAuthService.bindingCodeHash(code))
        try await audit(
            purpose == .passwordReset ? .passwordResetCodeIssued : .bindingCodeIssued,
            succeeded: true,
            account: account,
            client: client,
            code: purpose == .recovery ? "recovery" : nil,
            operator: action,
            on: db
        )
        return IssuedBindingCode(code: code, accountID: account, expiresAt: stored.expiresAt, purpose: purpose)
    }
}
