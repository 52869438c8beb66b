import BioAuthCore

extension APIProblem {
    /// Who can do something about a problem.
    public enum Kind: String, Sendable, CaseIterable {
        /// The user can fix it: another username, the right password, another PIN, a payment started again.
        case userCanFix
        /// The user must sign in again (the session or the device's binding is over).
        case signInAgain
        /// Only the bank can act: a payee it has not registered, a payment it locked, a device it cannot trust.
        case bankMustAct
        /// Nobody needs to act: the service is busy, locked for a while, or unreachable. Try again later.
        case tryLater
        /// The app has a defect or is out of date: the request was one the server never takes from a correct app.
        case appDefect
    }

    /// Who can act on this problem; nil for a code this version of the SDK does not know (from a newer server).
    public var kind: Kind? { ProblemGuide.entries[code]?.kind }

    /// What the app should offer the user: ``RecoveryAction/none`` when the message is all there is to it (a
    /// payment already paid), ``RecoveryAction/retry`` for a code this SDK does not know.
    public var recovery: RecoveryAction { ProblemGuide.entries[code]?.recovery ?? .retry }
}

/// Every problem code's kind and recovery, in one table. A test walks every code the server answers with and fails on
/// one missing here, or missing its message in either language: a code a user can meet (``APIProblem/Kind/userCanFix``,
/// ``APIProblem/Kind/signInAgain``) has a message of its own; the others may share their kind's message.
enum ProblemGuide {
    typealias Entry = (kind: APIProblem.Kind, recovery: RecoveryAction)

    static let entries: [ProblemCode: Entry] = {
        var table: [ProblemCode: Entry] = [:]
        func set(_ codes: [ProblemCode], _ kind: APIProblem.Kind, _ recovery: RecoveryAction) {
            for code in codes { table[code] = (kind, recovery) }
        }
        // What the user typed or chose.
        set(
            [
                .invalidUsername, .invalidPassword, .usernameTaken, .invalidCredentials, .invalidPIN, .weakPIN, .wrongPIN, .invalidAmount,
                .invalidMemo, .pinNotSet, .passkeyUserNotVerified,
            ],
            .userCanFix,
            .changeInput
        )
        // Start again: the payment or the ceremony moved on while the user looked.
        set(
            [.paymentExpired, .transactionMismatch, .challengeExpired, .challengeUsed, .challengeNotFound, .passkeyUserNotPresent],
            .userCanFix,
            .retry
        )
        // Nothing to do: it is already done or was cancelled; or an approval request that can no longer be answered (a
        // wrong number denied it; it expired or was answered on another device): whoever asks starts again.
        set(
            [
                .paymentAlreadyAuthorized, .paymentCancelled, .keyAlreadyRegistered, .passkeyAlreadyRegistered, .approvalAlreadyAnswered,
                .approvalExpired, .approvalNumberMismatch, .approvalNotFound,
            ],
            .userCanFix,
            .none
        )
        set([.approvalMismatch, .qrCodeNotFound, .qrCodeUsed], .userCanFix, .retry)
        // Binding a device: this one needs the approval of one bound before, or the bank's code.
        set([.deviceBindingRequired], .userCanFix, .bindThisDevice)
        set([.bindingCodeInvalid, .resetCodeInvalid], .userCanFix, .changeInput)
        set([.bindingApprovalInvalid, .noBoundDevice], .userCanFix, .retry)
        set([.deviceCoolingOff], .tryLater, .tryLater)
        set([.pinPaymentsDisabled], .userCanFix, .retry)
        // The session or the device's binding is over.
        set([.unauthenticated, .tokenExpired, .sessionEnded, .invalidRefreshToken, .refreshTokenReused], .signInAgain, .signInAgain)
        // A step-up the flows could not give (the level is a fresh password sign-in, or biometric sign-in is off here).
        set([.stepUpRequired], .signInAgain, .signInAgain)
        set([.deviceRevoked, .deviceNotFound, .passkeyUnknownCredential, .passkeyNotFound], .signInAgain, .usePassword)
        // Locked or busy for a while.
        set([.accountLocked, .pinLocked, .rateLimited, .notReady, .internalError], .tryLater, .tryLater)
        set([.serverUnreachable, .unexpectedResponse], .tryLater, .retry)
        // The bank's to sort out.
        set(
            [
                .payeeNotRegistered, .payeeNameMismatch, .paymentLocked, .passkeysDisabled, .appAttestMissing, .appAttestUntrustedChain,
                .appAttestCertificateExpired, .appAttestAppIDMismatch, .appAttestEnvironmentMismatch, .appAttestKeyReused,
                .appAttestCounterReplayed, .passkeyCounterReplayed, .passkeyAttestationUntrusted, .counterNotIncreasing, .accountNotFound,
            ],
            .bankMustAct,
            .contactBank
        )
        // Everything else is a request a correct, current app never sends, or one only the bank's backend and console
        // make (service clients, webhooks): the app's defect.
        for code in ProblemCode.all + [.serverUnreachable, .unexpectedResponse] where table[code] == nil {
            table[code] = (.appDefect, .updateApp)
        }
        return table
    }()
}
