import Foundation

/// Who asked for what the rules do: the origin of the request, as the HTTP layer received it. Rate limits count the
/// client address, and the audit trail keeps it with the `User-Agent`; the rules read both from here
/// (``BioAuthService/caller``), handed to them, never from the request's own state. Work that no request asked for (the
/// retention job, webhook deliveries, the command line) has no caller.
struct Caller: Sendable {
    /// The request's origin; nil when no request over a socket asked.
    let origin: ClientAddress.Origin?

    /// No request asked.
    static let none = Caller(origin: nil)

    /// The client's address as rate limits count it (``ClientAddress``): resolved only when asked, since most requests
    /// never ask. Nil when unknown.
    var address: String? {
        origin.flatMap { ClientAddress.resolve(peer: $0.peer, forwardedFor: $0.forwardedFor, trustedProxies: $0.trustedProxies) }
    }

    /// The request's `User-Agent` as the audit log keeps it: at most 200 characters, control characters dropped; nil
    /// without one.
    var userAgent: String? {
        guard let sent = origin?.userAgent else { return nil }
        let kept = String(String.UnicodeScalarView(sent.unicodeScalars.filter { !CharacterSet.controlCharacters.contains($0) }).prefix(200))
        return kept.isEmpty ? nil : kept
    }
}
