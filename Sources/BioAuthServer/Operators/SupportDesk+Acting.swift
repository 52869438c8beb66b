import BioAuthCore
import CoreMetrics
import Foundation
import Logging
import SQLKit

/// What support does for a customer, each action with the operator and a reason in its audit event.
extension SupportDesk {

    /// Revokes the customer's device: its key is refused from now on and its sessions end. Nothing changes for a revoked
    /// device; another customer's device is not found.
    public func revokeDevice(_ deviceID: String, customer: String, operator name: String, reason: String) async throws {
        let action = try await authorize(name, reason: reason)
        let account = try await accountID(customer)
        let recorder = self.recorder
        try await database.transaction { db -> Void in
            guard Validation.isIssuedID(deviceID), let device = try await db.devices.find(deviceID, account: account) else {
                throw SupportError.notFound("the customer has no device \(deviceID)")
            }
            guard device.revokedAt == nil else { return }
            try await recorder.revoke(device, keeping: nil, by: action, on: db)
        }
    }

    /// Revokes the customer's passkey: it signs in no more and the sessions it started end. Nothing changes for a revoked
    /// passkey; another customer's passkey is not found.
    public func revokePasskey(_ passkeyID: String, customer: String, operator name: String, reason: String) async throws {
        let action = try await authorize(name, reason: reason)
        let account = try await accountID(customer)
        let recorder = self.recorder
        try await database.transaction { db -> Void in
            guard Validation.isIssuedID(passkeyID), let passkey = try await db.passkeys.find(passkeyID, account: account) else {
                throw SupportError.notFound("the customer has no passkey \(passkeyID)")
            }
            guard passkey.revokedAt == nil else { return }
            try await recorder.revoke(passkey, keeping: nil, by: action, on: db)
        }
    }

    /// Ends every live session of the customer (they sign in again; their devices stay registered).
    public func endSessions(customer: String, operator name: String, reason: String) async throws {
        let action = try await authorize(name, reason: reason)
        let account = try await accountID(customer)
        let recorder = self.recorder
        try await database.transaction { db -> Void in
            try await recorder.endSessions(account: account, reason: "ended_by_operator", on: db)
            try await recorder.audit(.sessionsEnded, succeeded: true, account: account, operator: action, on: db)
        }
    }

    /// Ends one live session of the customer: that phone or browser signs in again, and nothing else changes (its device
    /// stays registered, the other sessions go on). Nothing changes for a session that ended already; another customer's
    /// session is not found.
    public func endSession(_ sessionID: String, customer: String, operator name: String, reason: String) async throws {
        let action = try await authorize(name, reason: reason)
        let account = try await accountID(customer)
        let recorder = self.recorder
        try await database.transaction { db -> Void in
            guard Validation.isIssuedID(sessionID), try await db.sessions.owner(of: sessionID) == account else {
                throw SupportError.notFound("the customer has no session \(sessionID)")
            }
            guard try await recorder.endSession(sessionID, account: account, reason: "ended_by_operator", on: db) else { return }
            try await recorder.audit(.sessionEnded, succeeded: true, account: account, session: sessionID, operator: action, on: db)
        }
    }

    /// What a one-time code from the support desk does.
    public enum CodePurpose: String, Sendable, CaseIterable {
        /// Binds one more device of the customer's (an account that has one binds no other by password).
        case bind
        /// A lost phone's: the device it binds replaces every other device, passkey and session of the account.
        case recovery
        /// Sets a new password (forgot password); binds nothing.
        case passwordReset = "password-reset"
    }

    /// A one-time code for the customer, for the bank's identity check to hand over (in the branch, on a call after ID&V):
    /// never a change made for them, only a code they use in their own app. Audited with the operator and reason; the code
    /// is returned here once and stored only as its hash.
    public func issueCode(
        _ purpose: CodePurpose,
        customer: String,
        operator name: String,
        reason: String
    ) async throws -> (code: String, expiresAt: Date) {
        let action = try await authorize(name, reason: reason)
        let account = try await accountID(customer)
        let (recorder, lifetime) = (self.recorder, codeLifetime)
        let stored: BindingCode.Purpose =
            switch purpose {
            case .bind: .bind
            case .recovery: .recovery
            case .passwordReset: .passwordReset
            }
        let issued = try await database.transaction { db in
            try await recorder.issueCode(account: account, purpose: stored, lifetime: lifetime, by: action, on: db)
        }
        return (issued.code, issued.expiresAt)
    }

    /// Lifts a password lock (and the count of wrong passwords).
    public func unlockAccount(customer: String, operator name: String, reason: String) async throws {
        let action = try await authorize(name, reason: reason)
        let account = try await accountID(customer)
        let recorder = self.recorder
        try await database.transaction { db -> Void in
            try await db.accounts.clearPasswordFailures(account)
            try await recorder.audit(.accountUnlocked, succeeded: true, account: account, operator: action, on: db)
        }
    }

    /// Lifts a PIN lock (and the count of wrong PINs).
    public func clearPINLock(customer: String, operator name: String, reason: String) async throws {
        let action = try await authorize(name, reason: reason)
        let account = try await accountID(customer)
        let recorder = self.recorder
        try await database.transaction { db -> Void in
            try await db.paymentPINs.clearLock(account: account)
            try await recorder.audit(.paymentPINUnlocked, succeeded: true, account: account, operator: action, on: db)
        }
    }

    /// Cancels the customer's pending payment (`payment.cancelled` is sent as when the customer cancels); another
    /// customer's payment is not found.
    public func cancelPayment(_ paymentID: String, customer: String, operator name: String, reason: String) async throws {
        let action = try await authorize(name, reason: reason)
        let account = try await accountID(customer)
        let recorder = self.recorder
        let now = clock.now
        try await database.transaction { db -> Void in
            guard Validation.isIssuedID(paymentID), let payment = try await db.payments.find(paymentID, account: account) else {
                throw SupportError.notFound("the customer has no payment \(paymentID)")
            }
            let status = payment.effective(at: now).status
            guard status == .pending else { throw SupportError.invalid("the payment is \(status.rawValue), not pending") }
            _ = try await recorder.cancel(payment, session: nil, by: action, on: db)
        }
    }
}
