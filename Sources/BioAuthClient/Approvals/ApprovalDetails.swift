import BioAuthCore
import Foundation

/// A request to approve, on this phone, a sign-in or an operation that started on another channel (the bank's call
/// centre, web banking, a branch terminal), as the server sent it.
public struct ApprovalDetails: Hashable, Sendable {
    /// The request's id.
    public var id: String
    /// A sign-in on another channel (the user picks the number it shows) or an operation (``bindingMessage``).
    public var kind: CanonicalApproval.Kind
    /// Who asks: the bank service's display name. Show it.
    public var requester: String
    /// What an operation is, to show verbatim; nil for a sign-in.
    public var bindingMessage: String?
    /// Where a sign-in comes from, as far as the server knows.
    public var channel: CanonicalApproval.Channel
    /// For a sign-in: three numbers, one of them the number the sign-in's channel shows. The user picks it; a wrong pick
    /// denies the request.
    public var numberChoices: [Int]
    /// The challenge the signature covers.
    public var challenge: Data
    /// The relying-party id the signature covers.
    public var relyingPartyID: String
    /// `pending`, `approved`, `denied` or `expired`.
    public var status: String
    /// When the request was made.
    public var createdAt: Date
    /// ``createdAt`` in milliseconds since 1970, as the canonical approval carries it.
    public var createdAtMs: Int64
    /// When a pending request expires.
    public var expiresAt: Date
    /// Why it was denied: `denied` or `number_mismatch`.
    public var denyReason: String?
    /// The server-signed approval, once approved.
    public var signedApproval: SignedApproval?

    /// The canonical approval of what this client shows, with the number the user picked (sign-ins) or none
    /// (operations): what the phone signs.
    public func canonical(number: Int?) throws -> CanonicalApproval {
        try CanonicalApproval(
            approvalID: id,
            kind: kind,
            requester: requester,
            bindingMessage: bindingMessage ?? "",
            channel: channel,
            picked: number,
            createdAtMs: createdAtMs
        )
    }

    /// What the approval prompt shows.
    public var summary: ApprovalSummary {
        ApprovalSummary(kind: kind, requester: requester, bindingMessage: bindingMessage, channel: channel)
    }
}
