import BioAuthCore
import Foundation
import SQLKit

extension BioAuthService {
    // MARK: Forgot password

    /// Forgot password: `username` sets `newPassword` with a reset code the bank's backend asked for after its own check
    /// of the customer (``issueBindingCode(account:purpose:client:)`` for ``BindingCode/Purpose/passwordReset``). A
    /// password lock is lifted, every session of the account ends, `account.password_reset` is sent; no device is bound and a
    /// cooling-off goes on. A wrong, used or expired code, another account's, a binding code, or an unknown username are
    /// all `reset_code_invalid`, refused before the new password is hashed; codes tried are counted per account and per
    /// address as binding codes are, apart from passwords.
    func resetPassword(username rawUsername: String, code raw: String, newPassword: String) async throws {
        try Validation.newPassword(newPassword)
        let invalid = APIError(.resetCodeInvalid, "This reset code is not valid for this customer: it may be mistyped, used or expired.")
        guard (1...128).contains(rawUsername.utf8.count) else { throw invalid }
        let codeHash = BindingCodeText.canonical(raw).map(Self.bindingCodeHash)
        // First the cheap part, committed whatever its outcome: the try is counted and a code that cannot be used is refused
        // (and audited), so a flood of guesses never reaches the password hash, the request's one slow step.
        let account = try await commit { db -> String in
            let found = try await db.accounts.find(idOrUsername: rawUsername.lowercased())
            try await countCodeAttempt("password-reset", account: found?.id, on: db)
            guard let account = found else { throw Refusal(invalid) }
            guard let codeHash,
                try await db.bindingCodes.isUsable(codeHash: codeHash, account: account.id, purposes: [.passwordReset], at: now.millisecondsSince1970)
            else {
                try await recorder.audit(.passwordReset, succeeded: false, account: account.id, code: invalid.code.rawValue, on: db)
                throw Refusal(invalid)
            }
            return account.id
        }
        let hash = try await passwords.hash(newPassword)
        // Then the code is used, once: a concurrent reset with the same code that got here too finds it used.
        try await commit { db -> Void in
            guard let codeHash,
                try await db.bindingCodes.use(
                    codeHash: codeHash,
                    account: account,
                    purposes: [.passwordReset],
                    device: nil,
                    at: now.millisecondsSince1970
                )
                    != nil
            else { throw Refusal(invalid) }
            // The new password works at once: a lock the forgotten one left is lifted.
            try await db.accounts.changePassword(account, hash: hash, at: now.millisecondsSince1970)
            try await db.accounts.clearPasswordFailures(account)
            try await recorder.endSessions(account: account, reason: "password_reset", on: db)
            try await recorder.audit(.passwordReset, succeeded: true, account: account, on: db)
            try await recorder.emit(.accountPasswordReset, .init(accountId: account), on: db)
        }
    }
}
