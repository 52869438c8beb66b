import BioAuthCore
import Foundation
import SQLKit

/// Proof of a fresh biometric for setting the PIN without the password, decoded: the device key's proof over a
/// `payment_pin` challenge.
struct BiometricProof: Sendable {
    var challengeID: String
    var proof: DeviceProof

    init(challengeID: String, keyID: String, counter: Int64, signature: String) throws {
        self.challengeID = challengeID
        self.proof = try DeviceProof(keyID: keyID, counter: counter, signature: signature)
    }
}

extension BioAuthService {
    /// Checks a PIN's form: exactly 6 ASCII digits, not all one digit, not a straight run.
    static func validatePIN(_ pin: String) throws {
        let digits = pin.utf8.map { Int($0) - 0x30 }
        guard digits.count == 6, digits.allSatisfy({ (0...9).contains($0) }) else {
            throw APIError(.invalidPIN, "A payment PIN is exactly 6 digits.")
        }
        let steps = Set(zip(digits, digits.dropFirst()).map { $1 - $0 })
        if steps == [0] || steps == [1] || steps == [-1] {
            throw APIError(.weakPIN, "Choose a PIN that is not one digit repeated or a straight run like 123456.")
        }
    }

    /// A challenge for setting the PIN with the account's key `keyID`.
    func createPaymentPINChallenge(keyID rawKeyID: String, session: AuthenticatedSession) async throws -> IssuedChallenge {
        try await issueSessionChallenge(.paymentPIN, keyID: rawKeyID, session: session, refusals: ProofRefusals(kind: .paymentPINSet))
    }

    /// Sets or changes the payment PIN, proven by exactly one of the account password (for an account with no device or
    /// passkey, or in a session with a fresh device key) and a fresh biometric signature. Only its bcrypt hash is stored;
    /// the failure count and lock are cleared.
    func setPaymentPIN(_ pin: String, currentPassword: String?, biometric: BiometricProof?, session: AuthenticatedSession) async throws {
        try Self.validatePIN(pin)
        guard (currentPassword == nil) != (biometric == nil) else {
            throw APIError(.malformedRequest, "Give exactly one of currentPassword and biometric.")
        }
        // The biometric proof is a fresh device key's, checked below; the password counts only for an account with
        // nothing stronger (SensitiveOperation.setPaymentPIN).
        try await requireAssurance(.setPaymentPIN, session: session, proved: biometric != nil ? .deviceKey : .password)
        if let currentPassword { _ = try await verifyPassword(of: session, currentPassword, auditing: .paymentPINSet) }
        let hash = try pins.seal(try await passwords.hash(pin), for: session.accountID)
        try await commit { db -> Void in
            if let biometric {
                let ceremony = ProofCeremony(
                    purpose: .paymentPIN,
                    account: session.accountID,
                    challenge: .issued(id: biometric.challengeID, session: session.sessionID),
                    checksAppAttest: false,
                    refusals: ProofRefusals(kind: .paymentPINSet)
                )
                _ = try await verifyProof(biometric.proof, ceremony, on: db)
            }
            try await db.paymentPINs.replace(account: session.accountID, hash: hash, at: now.millisecondsSince1970)
            try await recorder.audit(.paymentPINSet, succeeded: true, account: session.accountID, session: session.sessionID, on: db)
            return
        }
    }

    /// Authorizes with the payment PIN: the fallback when biometrics fail or are unavailable. Wrong PINs count
    /// against both the account's PIN lock and the payment's attempts.
    func authorizeWithPIN(_ paymentID: String, pin: String, session: AuthenticatedSession) async throws -> PaymentInfo {
        let policy = configuration.appAttest
        guard policy.mode != .require || policy.allowsPINPaymentsUnderRequire else {
            throw APIError(
                .pinPaymentsDisabled,
                "This service requires the secure environment check, which PIN payments do not carry. Pay with biometrics."
            )
        }
        guard pin.utf8.count == 6, pin.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
            throw APIError(.invalidPIN, "A payment PIN is exactly 6 digits.")
        }
        let storedHash: String = try await commit { db in
            _ = try await pendingPayment(paymentID, account: session.accountID, on: db)
            return try await storedPIN(account: session.accountID, on: db).hash
        }
        let bcryptHash = Self.isLegacyPINHash(storedHash) ? storedHash : pins.open(storedHash, for: session.accountID)
        if bcryptHash == nil {
            // Sealed for another account or damaged: the database was changed behind the server's back. Fail closed.
            logger.error("a payment PIN hash does not open with the PIN key", metadata: ["account": "\(session.accountID)"])
        }
        let matches = try await passwords.verify(pin, hash: bcryptHash)
        return try await commit { db in
            // Everything is checked again: another request may have authorized the payment or locked the PIN
            // while bcrypt ran.
            let payment = try await pendingPayment(paymentID, account: session.accountID, on: db)
            let stored = try await storedPIN(account: session.accountID, on: db)
            guard matches, stored.hash == storedHash else {
                let failures = stored.failures + 1
                var error = APIError(.wrongPIN, "The payment PIN is wrong.")
                if failures >= configuration.maxFailedPINAttempts {
                    let until = now.addingTimeInterval(configuration.pinLockDuration)
                    try await db.paymentPINs.lock(account: session.accountID, until: until.millisecondsSince1970)
                    try await recorder.audit(.paymentPINLocked, succeeded: true, account: session.accountID, on: db)
                    error = pinLockedError(until: until)
                } else {
                    try await db.paymentPINs.recordFailures(account: session.accountID, failures: failures)
                }
                _ = try await recordFailedAuthorization(payment, APIError(.wrongPIN, "The payment PIN is wrong."), device: nil, on: db)
                throw Refusal(error)
            }
            try await db.paymentPINs.recordFailures(account: session.accountID, failures: 0)
            return try await authorize(payment, method: "pin", device: nil, session: session, on: db)
        }
    }

    /// Whether `stored` is a bcrypt hash from before sealing.
    static func isLegacyPINHash(_ stored: String) -> Bool { stored.hasPrefix("$2") }

    /// The SQL `LIKE` pattern of legacy hashes (``isLegacyPINHash(_:)``; `$` and `2` are not wildcards).
    static let legacyPINHashPattern = "$2%"

    /// Seals every PIN hash stored before the PIN key existed (run at start-up; harmless when several instances run
    /// it at once), and refuses a key that did not seal the hashes already sealed.
    ///
    /// - Returns: how many hashes were sealed.
    @discardableResult
    func sealLegacyPINHashes() async throws -> Int {
        let sealed = try await commit { db -> Int in
            // One sealed hash tells whether this key sealed them (all are sealed under the key the file holds), so
            // start-up reads one row, plus the legacy ones only while they exist.
            if let sealed = try await db.paymentPINs.anySealedHash(legacyPattern: Self.legacyPINHashPattern), !pins.sealedWithThisKey(sealed) {
                throw ConfigurationError(
                    message: "the PIN key file does not match this database: its PIN hashes were sealed under another key (use that file)"
                )
            }
            let legacy = try await db.paymentPINs.legacyHashes(pattern: Self.legacyPINHashPattern)
            for (account, stored) in legacy {
                try await db.paymentPINs.replaceHash(account: account, old: stored, new: try pins.seal(stored, for: account))
            }
            return legacy.count
        }
        if sealed > 0 { logger.notice("sealed \(sealed) payment PIN hashes stored before the PIN key existed") }
        return sealed
    }

    private func storedPIN(account: String, on db: any SQLDatabase) async throws -> (hash: String, failures: Int) {
        guard let stored = try await db.paymentPINs.find(account: account) else {
            throw Refusal(APIError(.pinNotSet, "No payment PIN is set for this account."))
        }
        if let locked = stored.lockedUntil, locked > now { throw Refusal(pinLockedError(until: locked)) }
        return (stored.hash, stored.failedAttempts)
    }

    private func pinLockedError(until: Date) -> APIError {
        let minutes = Int((until.timeIntervalSince(now) / 60).rounded(.up))
        return APIError(
            .pinLocked,
            "Too many wrong PINs. PIN payments are locked for \(max(minutes, 1)) minutes.",
            retryAfter: Int(until.timeIntervalSince(now).rounded(.up))
        )
    }
}
