import BioAuthCore
import Foundation
import SQLKit

/// A step-up the server accepted: the session's level now and until when the step-up counts.
struct StepUpResult: Sendable {
    var acr: String
    var authTime: Date
    var expiresAt: Date
    /// The one action it counts for; nil for every action of the table.
    var action: StepUpAction?
}

/// The session's assurance as introspection tells the bank's resource servers.
struct IntrospectedAssurance: Sendable, Equatable {
    var acr: String
    var authTime: Date
    /// Each factor's latest authentication in the session, by RFC 8176 method.
    var factorAuthTimes: [String: Date]
    var stepUpExpiresAt: Date?
    var stepUpAction: String?
    /// The device key behind `acr`, when it is one (base64url).
    var deviceKeyID: String?
}

/// Levels from evidence and the table of sensitive operations (``SensitiveOperation``): what a session proved, whether
/// that meets an operation's row, and the step-up ceremony that raises it (docs/PROTOCOL.md, "Step-up").
extension BioAuthService {
    /// What `session` has proven; nil when it has ended or is gone.
    func assurance(of sessionID: String, on db: any SQLDatabase) async throws -> SessionAssurance? {
        guard let evidence = try await db.sessions.evidence(sessionID), !evidence.ended else { return nil }
        let mode = configuration.appAttest.mode
        let signInLevel: AssuranceLevel
        let signInMethod: String
        switch evidence.method {
        case .password: (signInLevel, signInMethod) = (.password, "pwd")
        case .biometric, .approval: (signInLevel, signInMethod) = (.deviceKey(attested: evidence.deviceAttested, appAttest: mode), "hwk")
        case .passkey:
            (signInLevel, signInMethod) = evidence.passkeyBackupEligible == false ? (.deviceKey, "hwk") : (.syncedPasskey, "swk")
        }
        let signIn = SessionAssurance.Event(level: signInLevel, at: evidence.createdAt, method: signInMethod, keyID: evidence.deviceKeyID)
        var stepUp: SessionAssurance.Event?
        if let at = evidence.stepUpAt, let level = evidence.stepUpLevel.flatMap(AssuranceLevel.init(rawValue:)) {
            stepUp = SessionAssurance.Event(level: level, at: at, method: level == .syncedPasskey ? "swk" : "hwk", keyID: evidence.stepUpDeviceKeyID)
        }
        let best: AssuranceLevel =
            evidence.accountHasDevice || evidence.accountHasBoundPasskey
            ? .deviceKey : evidence.accountHasSyncedPasskey ? .syncedPasskey : .password
        let assurance = SessionAssurance(
            signIn: signIn,
            stepUp: stepUp,
            stepUpAction: StepUpAction(rawValue: evidence.stepUpAction ?? ""),
            accountBest: max(best, signInLevel)
        )
        return assurance
    }

    /// Refuses, before anything is written, a request for `operation` that the session's evidence does not meet
    /// (`step_up_required`); `proved` is the level of a proof the request carries itself (a password checked by the
    /// operation, say), which counts when it is enough.
    func requireAssurance(_ operation: SensitiveOperation, session: AuthenticatedSession, proved: AssuranceLevel? = nil) async throws {
        // A proof in the request that meets the row whatever the account holds (a PIN's own biometric signature): no read.
        if let proved, proved >= operation.level { return }
        let found = try await database.transaction(isolation: .eachStatement) { db in try await assurance(of: session.sessionID, on: db) }
        guard let assurance = found else { throw APIError(.sessionEnded, "The session has ended. Sign in again.") }
        guard !assurance.meets(operation, at: now, lifetime: configuration.stepUpLifetime, proved: proved) else { return }
        throw APIError(stepUp: .init(level: assurance.required(by: operation), maxAge: operation.maxAge, action: operation.action))
    }

    /// A challenge for a step-up of `session` with the account's key `keyID`.
    func createStepUpChallenge(keyID rawKeyID: String, session: AuthenticatedSession) async throws -> IssuedChallenge {
        try await issueSessionChallenge(
            .stepUp,
            keyID: rawKeyID,
            session: session,
            refusals: ProofRefusals(kind: .stepUp, session: session.sessionID)
        )
    }

    /// Raises `session` with the device key's signature over a `stepup` payload whose hash is the canonical step-up of
    /// this session and `action`: the challenge used up, the counter advanced, the step-up recorded on the session and
    /// audited. Refused proofs are audited as `step_up` failures.
    func stepUp(
        _ proof: DeviceProof,
        challengeID: String,
        action rawAction: String?,
        session: AuthenticatedSession
    ) async throws -> StepUpResult {
        let action = StepUpAction(rawValue: rawAction ?? "")
        guard action == .any || SensitiveOperation.of(action) != nil else {
            throw APIError(.malformedRequest, "action must be one of \(StepUpAction.all.map(\.rawValue).joined(separator: ", ")), or absent.")
        }
        let hash = try CanonicalStepUp(sessionID: session.sessionID, action: action).hash
        let lifetime = configuration.stepUpLifetime
        return try await commit { db in
            let ceremony = ProofCeremony(
                purpose: .stepUp,
                account: session.accountID,
                challenge: .issued(id: challengeID, session: session.sessionID),
                binds: .init(computed: hash),
                refusals: ProofRefusals(kind: .stepUp, session: session.sessionID)
            )
            let verified = try await verifyProof(proof, ceremony, on: db)
            let level = AssuranceLevel.deviceKey(attested: verified.device.isAttested, appAttest: configuration.appAttest.mode)
            let at = now
            guard
                try await db.sessions.recordStepUp(
                    session.sessionID,
                    at: at.millisecondsSince1970,
                    level: level.rawValue,
                    device: verified.device.id,
                    action: action.rawValue
                )
            else {
                throw Refusal(APIError(.sessionEnded, "The session has ended. Sign in again."))
            }
            try await recorder.audit(
                .stepUp,
                succeeded: true,
                account: session.accountID,
                device: verified.device.id,
                session: session.sessionID,
                on: db
            )
            return StepUpResult(acr: level.acr, authTime: at, expiresAt: at.addingTimeInterval(lifetime), action: action == .any ? nil : action)
        }
    }

    /// What introspection tells of the session's assurance at `now`.
    func introspectedAssurance(of sessionID: String, on db: any SQLDatabase) async throws -> IntrospectedAssurance? {
        guard let assurance = try await assurance(of: sessionID, on: db) else { return nil }
        let lifetime = configuration.stepUpLifetime
        let current = assurance.current(at: now, lifetime: lifetime)
        var factors = [assurance.signIn.method: assurance.signIn.at]
        if let stepUp = assurance.stepUp, stepUp.at > (factors[stepUp.method] ?? .distantPast) { factors[stepUp.method] = stepUp.at }
        let live = assurance.liveStepUp(at: now, lifetime: lifetime)
        return IntrospectedAssurance(
            acr: current.level.acr,
            authTime: current.at,
            factorAuthTimes: factors,
            stepUpExpiresAt: assurance.stepUpExpiry(at: now, lifetime: lifetime),
            stepUpAction: live != nil && assurance.stepUpAction != .any ? assurance.stepUpAction.rawValue : nil,
            deviceKeyID: current.keyID
        )
    }
}
