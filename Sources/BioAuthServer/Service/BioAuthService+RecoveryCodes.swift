import BioAuthCore
import Foundation
import SQLKit

/// A set of recovery codes as the customer sees it, once.
struct IssuedRecoveryCodes: Sendable {
    var codes: [String]
    var createdAt: Date
}

/// Customers' own recovery codes (docs/PROTOCOL.md, "Binding a device"): a lost phone's way back without the bank. Ten
/// codes of 80 bits, made from a bound device with a fresh Face ID (``SensitiveOperation/createRecoveryCodes``), shown
/// once, stored as HMACs under the server's pepper, each usable once with the password to bind a new phone, which then
/// replaces every other device, passkey and session of the account (as a recovery code from the bank does).
extension BioAuthService {
    /// How many codes a set holds.
    static let recoveryCodesPerSet = 10

    /// The stored hash of a recovery code (canonical form): HMAC-SHA256 under the pepper derived from the sealing key.
    func recoveryCodeHash(_ canonical: String) -> String { sealers.recoveryCodes.authenticationCode(canonical) }

    /// A new set of recovery codes for the session's account, voiding the unused codes of the set before. Needs a bound
    /// device on the account (`no_bound_device`) and the table's fresh device key (`step_up_required`).
    func createRecoveryCodes(session: AuthenticatedSession) async throws -> IssuedRecoveryCodes {
        try await requireAssurance(.createRecoveryCodes, session: session)
        let codes = (0..<Self.recoveryCodesPerSet).map { _ in RecoveryCodeText.make(random.bytes(10)) }
        let hashes = codes.map(recoveryCodeHash)
        let at = now
        try await commit { db -> Void in
            guard try await db.devices.hasLive(account: session.accountID) else {
                throw Refusal(APIError(.noBoundDevice, "Recovery codes are made on a bound device: turn on biometric sign-in first."))
            }
            try await db.bindingCodes.voidUnused(account: session.accountID, purpose: .customerRecovery, at: at.millisecondsSince1970)
            for hash in hashes {
                let stored = BindingCode(
                    id: newID(),
                    accountID: session.accountID,
                    createdAt: at,
                    // They do not expire: a new set, or a recovery, voids them.
                    expiresAt: at.addingTimeInterval(100 * 365 * 86_400),
                    purpose: .customerRecovery
                )
                try await db.bindingCodes.insert(stored, codeHash: hash)
            }
            try await recorder.audit(.recoveryCodesCreated, succeeded: true, account: session.accountID, session: session.sessionID, on: db)
        }
        return IssuedRecoveryCodes(codes: codes, createdAt: at)
    }
}
