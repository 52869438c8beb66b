import BioAuthCore
import Foundation

/// What ``BioAuthFlows`` did, for an app's diagnostics or the demo's `--verbose`. Never carries a token, a
/// password or a PIN.
public enum FlowEvent: Sendable {
    /// A system prompt was shown with this text.
    case prompted(reason: String)
    /// The device key signed this payload for the challenge `challengeID`.
    case signed(challengeID: String, payload: SignedPayload, signature: Data)
    /// The access token expired and was refreshed.
    case refreshed
}
