import BioAuthCore
import Foundation

/// How strongly a session's customer was authenticated, from what was proven (docs/PROTOCOL.md, "Assurance levels"),
/// mapped against NIST SP 800-63B-4. Ordered: a higher level meets every requirement a lower one does.
enum AssuranceLevel: Int, Sendable, Comparable, CaseIterable {
    /// A password alone: a memorized secret, AAL1.
    case password = 1
    /// A synced passkey: a phishing-resistant key that user verification unlocks, but one that leaves the device (a
    /// syncable authenticator, AAL2 under 800-63B-4 §B).
    case syncedPasskey = 2
    /// A device-bound key behind a biometric: BioAuth's device key in the Secure Enclave, or a device-bound passkey. A
    /// multi-factor cryptographic authenticator whose key cannot leave the device, phishing resistant: AAL2.
    case deviceKey = 3
    /// The same, with every proof of the key accompanied by an App Attest assertion the deployment requires and verified:
    /// the genuine app on genuine Apple hardware. What AAL3 asks of the authenticator; the deployment's own controls
    /// decide the rest.
    case attestedDeviceKey = 4

    /// The `acr` value (introspection, RFC 9470's `acr_values`).
    var acr: String {
        switch self {
        case .password: "urn:bioauth:acr:password"
        case .syncedPasskey: "urn:bioauth:acr:synced-passkey"
        case .deviceKey: "urn:bioauth:acr:device-key"
        case .attestedDeviceKey: "urn:bioauth:acr:attested-device-key"
        }
    }

    static func < (lhs: AssuranceLevel, rhs: AssuranceLevel) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The level of a device key's proof: attested when the device has an App Attest key and the deployment requires an
    /// assertion with every proof (so this one had one, verified).
    static func deviceKey(attested: Bool, appAttest: AppAttestPolicy.Mode) -> AssuranceLevel {
        attested && appAttest == .require ? .attestedDeviceKey : .deviceKey
    }
}

/// What a session has proven, and when: its sign-in and its latest step-up, with the strongest level the account could
/// prove at all (its live devices and passkeys).
struct SessionAssurance: Sendable {
    /// One authentication in the session.
    struct Event: Sendable {
        var level: AssuranceLevel
        var at: Date
        /// RFC 8176's name of the factor (`pwd`, `hwk`, `swk`).
        var method: String
        /// The device key that proved it (base64url), for a device key.
        var keyID: String?
    }

    var signIn: Event
    /// The latest step-up, whether or not it still counts.
    var stepUp: Event?
    /// The action the latest step-up is for; ``StepUpAction/any`` for every action.
    var stepUpAction: StepUpAction
    /// The strongest level the account holds an authenticator for.
    var accountBest: AssuranceLevel

    /// The step-up while it counts at `now`.
    func liveStepUp(at now: Date, lifetime: TimeInterval) -> Event? {
        guard let stepUp, now.timeIntervalSince(stepUp.at) < lifetime else { return nil }
        return stepUp
    }

    /// The session's level at `now`, with the evidence behind it: a live step-up's, if it raises the session, or the
    /// sign-in's. A step-up for one action still raises the level shown; it meets only that action's requirement.
    func current(at now: Date, lifetime: TimeInterval) -> Event {
        if let stepUp = liveStepUp(at: now, lifetime: lifetime), stepUp.level >= signIn.level { return stepUp }
        return signIn
    }

    /// When the live step-up stops counting, if one does.
    func stepUpExpiry(at now: Date, lifetime: TimeInterval) -> Date? {
        liveStepUp(at: now, lifetime: lifetime).map { $0.at.addingTimeInterval(lifetime) }
    }

    /// The level `operation` needs of this account: the row's, or the strongest the account can prove when that is less
    /// (an account with no device cannot be asked for a device key).
    func required(by operation: SensitiveOperation) -> AssuranceLevel { min(operation.level, accountBest) }

    /// Whether the session meets `operation`'s requirement at `now`: evidence of the required level no older than its
    /// maximum age (a step-up's only while it lasts, and only for its action), or the request's own proof (`proved`).
    func meets(_ operation: SensitiveOperation, at now: Date, lifetime: TimeInterval, proved: AssuranceLevel? = nil) -> Bool {
        let required = required(by: operation)
        if let proved, proved >= required { return true }
        if signIn.level >= required, now.timeIntervalSince(signIn.at) <= operation.maxAge { return true }
        if let stepUp = liveStepUp(at: now, lifetime: lifetime), stepUp.level >= required,
            stepUpAction == .any || stepUpAction == operation.action, now.timeIntervalSince(stepUp.at) <= operation.maxAge
        {
            return true
        }
        return false
    }
}
