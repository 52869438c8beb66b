import BioAuthCore
import Foundation
import SQLKit

/// An account as the API shows it.
struct AccountInfo: Sendable {
    var id: String
    var username: String
    var createdAt: Date
}

extension BioAuthService {
    /// Registers an account. The password is hashed off the event loop before the transaction starts.
    func createAccount(username rawUsername: String, password: String) async throws -> AccountInfo {
        let username = try Validation.username(rawUsername)
        try Validation.newPassword(password)
        let hash = try await passwords.hash(password)
        let account = AccountInfo(id: newID(), username: username, createdAt: now)
        return try await commit { db in
            if try await db.accounts.exists(username: username) {
                throw Refusal(APIError(.usernameTaken, "Another account has this username."))
            }
            try await db.accounts.insert(account, passwordHash: hash)
            try await recorder.audit(.accountCreated, succeeded: true, account: account.id, on: db)
            return account
        }
    }

    /// Password sign-in: checks the lock, verifies the password off the event loop, then records the
    /// outcome. The fifth consecutive wrong password locks the account.
    func signInWithPassword(
        username rawUsername: String,
        password: String,
        installationID rawInstallation: String
    )
        async throws -> IssuedTokens
    {
        let username = try Validation.username(rawUsername)
        let installationID = try Validation.installationID(rawInstallation)
        let stored = try await database.transaction { db in try await storedCredentials(username: username, on: db) }
        if let stored, let lockedUntil = stored.lockedUntil, lockedUntil > now {
            return try await commit { db in
                try await recorder.audit(.passwordSignIn, succeeded: false, account: stored.id, code: "account_locked", on: db)
                throw Refusal(lockedError(until: lockedUntil))
            }
        }
        // bcrypt ignores bytes after the 72nd; such passwords can't have been set, so they never match.
        let plausible = (1...72).contains(password.utf8.count)
        let matches = try await passwords.verify(password, hash: plausible ? stored?.passwordHash : nil)
        return try await commit { db in
            guard let stored else {
                try await recorder.audit(.passwordSignIn, succeeded: false, account: nil, code: "invalid_credentials", on: db)
                throw Refusal(APIError(.invalidCredentials, "The username or the password is wrong."))
            }
            // Re-read inside the transaction: a concurrent failure may have locked the account, or the
            // password may have changed since it was verified.
            guard let current = try await storedCredentials(username: username, on: db), current.id == stored.id else {
                throw Refusal(APIError(.invalidCredentials, "The username or the password is wrong."))
            }
            if let lockedUntil = current.lockedUntil, lockedUntil > now {
                try await recorder.audit(.passwordSignIn, succeeded: false, account: current.id, code: "account_locked", on: db)
                throw Refusal(lockedError(until: lockedUntil))
            }
            guard matches, current.passwordHash == stored.passwordHash else {
                throw Refusal(try await recordWrongPassword(account: current, kind: .passwordSignIn, on: db))
            }
            try await db.accounts.clearPasswordFailures(current.id)
            let tokens = try await startSession(account: current.id, installationID: installationID, method: .password, device: nil, on: db)
            try await recorder.audit(.passwordSignIn, succeeded: true, account: current.id, session: tokens.sessionID, on: db)
            return tokens
        }
    }

    /// Changes the password after checking the current one, and ends every session of the account. A sensitive
    /// operation (``SensitiveOperation/changePassword``): the current password counts only for an account with nothing
    /// stronger; otherwise the session needs a fresh device key (its sign-in or a step-up).
    func changePassword(session: AuthenticatedSession, current: String, new: String) async throws {
        try Validation.newPassword(new)
        try await requireAssurance(.changePassword, session: session, proved: .password)
        let stored = try await verifyPassword(of: session, current, auditing: .passwordChanged)
        let newHash = try await passwords.hash(new)
        try await commit { db -> Void in
            // A concurrent change since the check wins; this one is refused.
            guard let latest = try await storedCredentials(id: stored.id, on: db), latest.passwordHash == stored.passwordHash else {
                throw Refusal(APIError(.invalidCredentials, "The username or the password is wrong."))
            }
            try await db.accounts.changePassword(stored.id, hash: newHash, at: now.millisecondsSince1970)
            try await recorder.endSessions(account: stored.id, reason: "password_changed", on: db)
            try await recorder.audit(.passwordChanged, succeeded: true, account: stored.id, session: session.sessionID, on: db)
            return
        }
    }

    /// Checks the signed-in account's password (off the event loop), with the same lock as sign-in: a wrong
    /// one is counted, audited as `kind` and thrown.
    func verifyPassword(
        of session: AuthenticatedSession,
        _ password: String,
        auditing kind: AuditKind
    ) async throws
        -> StoredCredentials
    {
        let stored = try await database.transaction { db in try await storedCredentials(id: session.accountID, on: db) }
        guard let stored else { throw APIError(.sessionEnded, "The session has ended.") }
        if let lockedUntil = stored.lockedUntil, lockedUntil > now { throw lockedError(until: lockedUntil) }
        let plausible = (1...72).contains(password.utf8.count)
        guard try await passwords.verify(password, hash: plausible ? stored.passwordHash : nil) else {
            return try await commit { db in
                guard let latest = try await storedCredentials(id: stored.id, on: db) else {
                    throw Refusal(APIError(.sessionEnded, "The session has ended."))
                }
                throw Refusal(try await recordWrongPassword(account: latest, kind: kind, on: db))
            }
        }
        return stored
    }

    // MARK: Internals

    typealias StoredCredentials = AccountsTable.Credentials

    func storedCredentials(username: String, on db: any SQLDatabase) async throws -> StoredCredentials? {
        try await db.accounts.credentials(username: username)
    }

    func storedCredentials(id: String, on db: any SQLDatabase) async throws -> StoredCredentials? {
        try await db.accounts.credentials(id: id)
    }

    /// Counts a wrong password; the configured number in a row locks the account.
    private func recordWrongPassword(account: StoredCredentials, kind: AuditKind, on db: any SQLDatabase) async throws -> APIError {
        let failures = account.failedAttempts + 1
        if failures >= configuration.maxFailedPasswordAttempts {
            let until = now.addingTimeInterval(configuration.accountLockDuration)
            try await db.accounts.lockPassword(account.id, until: until.millisecondsSince1970)
            try await recorder.audit(kind, succeeded: false, account: account.id, code: "invalid_credentials", on: db)
            try await recorder.audit(.accountLocked, succeeded: true, account: account.id, on: db)
            try await recorder.emit(.accountLocked, .init(accountId: account.id, lockedUntil: try InternetDateTime().encode(until)), on: db)
            return lockedError(until: until)
        }
        try await db.accounts.recordPasswordFailures(account.id, failures: failures)
        try await recorder.audit(kind, succeeded: false, account: account.id, code: "invalid_credentials", on: db)
        return APIError(.invalidCredentials, "The username or the password is wrong.")
    }

    func lockedError(until: Date) -> APIError {
        let seconds = Int(until.timeIntervalSince(now).rounded(.up))
        return APIError(.accountLocked, "Too many wrong passwords. Try again in \(max(seconds, 1)) seconds.", retryAfter: seconds)
    }
}
