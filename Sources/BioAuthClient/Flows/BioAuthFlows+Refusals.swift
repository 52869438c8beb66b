import BioAuthCore
import Foundation

/// The answers that mean this phone's session or key is gone, learned from the SDK's own calls and from the app's:
/// the session machine then says so, wherever the app heard it first.
extension BioAuthFlows {
    /// What an answer says of this phone's session and device key.
    enum Verdict: Equatable {
        /// The session is over (signed out elsewhere, replaced, ended by support, a refresh token reused): sign in again.
        case sessionGone
        /// This device is revoked: its key signs in no more. (`device_not_found` is not among these: the app's call may
        /// have named another device.)
        case deviceGone
        /// The access token expired before the clock said: refresh it.
        case tokenExpired
        /// Nothing about the session.
        case unrelated
    }

    /// The verdict of a problem code.
    static func verdict(of code: ProblemCode) -> Verdict {
        switch code {
        case .sessionEnded, .unauthenticated, .invalidRefreshToken, .refreshTokenReused: .sessionGone
        case .deviceRevoked: .deviceGone
        case .tokenExpired: .tokenExpired
        default: .unrelated
        }
    }

    /// Tells the SDK what the bank's API answered one of the app's own calls made with ``accessToken()``, so that the
    /// session machine learns what the app learned. An answer that means the session is over (`session_ended`,
    /// `unauthenticated`, `refresh_token_reused`, `invalid_refresh_token`) signs out here, keeping biometric sign-in
    /// (the next "Sign in with Face ID" asks the server, which refuses a revoked device before any prompt); one that
    /// means this device is revoked (`device_revoked`) signs out and turns biometric sign-in off with that reason; `token_expired` makes the next ``accessToken()`` refresh. Any other answer changes nothing.
    ///
    /// The SDK's own calls do the same by themselves, and `BioAuthModel` reports every ``APIProblem`` an action meets.
    ///
    /// - Returns: Whether this signed the app out.
    @discardableResult
    public func report(_ problem: APIProblem) async throws -> Bool {
        switch Self.verdict(of: problem.code) {
        case .sessionGone:
            let hasTokens = try await storedTokens() != nil
            guard await session.snapshot.state != .signedOut || hasTokens else { return false }
            try await endLocalSession()
            return true
        case .deviceGone:
            // The machine's deviceRevoked ends the session too, whether biometric sign-in was on or not.
            let wasSignedIn = await session.snapshot.state != .signedOut
            _ = try await handleServerRefusal(problem)
            return wasSignedIn
        case .tokenExpired:
            guard var tokens = try await storedTokens() else { return false }
            tokens.accessTokenExpiresAt = .distantPast
            try await save(tokens)
            return false
        case .unrelated:
            return false
        }
    }

    /// ``report(_:)`` for an app with its own networking: the HTTP status and body of the bank's answer. A body that is
    /// an RFC 9457 problem document with BioAuth's `code` is reported as that problem; a 401 that names no code (the
    /// bank's backend's own refusal) is checked with BioAuth's server, which says whether the session is still live.
    /// Any other answer changes nothing.
    ///
    /// - Returns: Whether this signed the app out.
    @discardableResult
    public func report(status: Int, body: Data) async throws -> Bool {
        if let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any], let code = object["code"] as? String,
            !code.isEmpty, code.utf8.count <= 64
        {
            let problem = APIProblem(ProblemCode(rawValue: code), status: status, detail: object["detail"] as? String ?? code)
            if Self.verdict(of: problem.code) != .unrelated { return try await report(problem) }
        }
        guard status == 401, try await storedTokens() != nil else { return false }
        let wasSignedIn = await session.snapshot.state != .signedOut
        do {
            // A cheap authenticated read: a session the server ended ends here (inside withAccessToken).
            _ = try await withAccessToken { token in try await self.api.devices(accessToken: token) }
        } catch let problem as APIProblem where Self.verdict(of: problem.code) != .unrelated {
            _ = try await report(problem)
        }
        let now = await session.snapshot.state
        return wasSignedIn && now == .signedOut
    }

    /// Forgets the tokens and tells the session machine the session is over; biometric sign-in stays as it is.
    func endLocalSession() async throws {
        try await store.removeValue(forKey: Self.tokensKey)
        guard await session.snapshot.state != .signedOut else { return }
        try await session.handle(.sessionExpired)
    }
}
