import Foundation
import SwiftASN1
import X509

/// Where passkeys (WebAuthn credentials) work: the relying party id, the web origins that may run ceremonies, which
/// attestation is accepted, and whether `bioauth serve` serves its own web sign-in page.
///
/// Passkeys are off until at least one origin is configured (or the web page is turned on, which adds
/// `http://localhost:<port>`). The relying party id defaults to the first origin's host.
public struct PasskeyPolicy: Sendable {
    /// The exact origins (`https://www.bank.example`, `http://localhost:8080`) whose pages may register and use
    /// passkeys. A ceremony from any other origin is refused (`passkey_origin_mismatch`).
    public var origins: [String] = []
    /// The relying party id, a registrable domain that every origin's host equals or ends with; `nil` takes the first
    /// origin's host.
    public var relyingPartyID: String? = nil
    /// The name browsers show beside the passkey ("BioAuth").
    public var relyingPartyName: String = "BioAuth"
    /// Roots by attestation format for trusted attestation (e.g. `"packed"`, `"tpm"`, `"apple"`).
    public var attestationRoots: [String: [Certificate]] = [:]
    /// Whether a new passkey needs attestation that leads to ``attestationRoots``; `false` accepts passkeys that
    /// send none (iCloud Keychain and Google Password Manager do).
    public var requireTrustedAttestation = false
    /// How long a registration or sign-in ceremony may take (300 s).
    public var ceremonyLifetime: TimeInterval = 300
    /// Whether `bioauth serve` serves the web sign-in page under `/web` (off by default).
    public var webPageEnabled = false

    /// The defaults: passkeys off.
    public init() {}

    /// Whether the passkey endpoints work.
    public var enabled: Bool { !origins.isEmpty }

    /// The relying party id in effect.
    public var resolvedRelyingPartyID: String { relyingPartyID ?? origins.first.flatMap { URLComponents(string: $0)?.host } ?? "" }

    /// The verifier for this policy.
    var relyingParty: WebAuthnRelyingParty {
        WebAuthnRelyingParty(
            rpID: resolvedRelyingPartyID,
            origins: origins,
            attestationPolicy: PasskeyAttestationPolicy(trustedRoots: attestationRoots, requireTrustedAttestation: requireTrustedAttestation),
            requireUserVerification: true,
            requireUserPresence: true
        )
    }

    /// Roots read from `FORMAT=PEM-FILE,…` (several certificates per file allowed), by attestation format.
    public static func attestationRoots(parsing text: String) throws(ConfigurationError) -> [String: [Certificate]] {
        var roots: [String: [Certificate]] = [:]
        for item in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !item.isEmpty {
            let parts = item.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { throw ConfigurationError(message: "must be FORMAT=PEM-FILE items") }
            guard let pem = try? String(contentsOfFile: parts[1], encoding: .utf8),
                let certificates = try? PEMDocument.parseMultiple(pemString: pem).map({ try Certificate(pemDocument: $0) }), !certificates.isEmpty
            else { throw ConfigurationError(message: "names \(parts[1]), which holds no PEM certificate") }
            roots[parts[0], default: []] += certificates
        }
        return roots
    }

    /// With the web page on and no origins, the page's own origin on this machine: `http://localhost:<port>` (rp id
    /// `localhost`), so that `bioauth serve --passkey-web` works on a developer's machine without more settings.
    public mutating func applyDefaultOrigin(port: Int) {
        if webPageEnabled, origins.isEmpty, port > 0 { origins = ["http://localhost:\(port)"] }
    }

    /// Checks the values; the message names the setting.
    func validate() throws {
        func fail(_ message: String) -> ConfigurationError { ConfigurationError(message: message) }
        guard ceremonyLifetime > 0, ceremonyLifetime <= 600 else { throw fail("passkey ceremony lifetime must be 1-600 seconds") }
        guard (1...64).contains(relyingPartyName.count) else { throw fail("passkey relying-party name must be 1-64 characters") }
        guard enabled else {
            guard !requireTrustedAttestation else { throw fail("passkey attestation require needs passkey origins") }
            guard !webPageEnabled else { throw fail("the passkey web page needs passkey origins (or a fixed port for http://localhost:PORT)") }
            return
        }
        let rpID = resolvedRelyingPartyID
        guard !rpID.isEmpty, !rpID.contains("/"), rpID == rpID.lowercased() else {
            throw fail("passkey relying-party id \(rpID) is not a lower-case host")
        }
        for origin in origins {
            // An origin is scheme://host[:port] with nothing after it; WebAuthn needs a secure context, which plain
            // http is only on localhost.
            guard let components = URLComponents(string: origin), let scheme = components.scheme, let host = components.host,
                components.path.isEmpty, components.query == nil, components.fragment == nil, components.user == nil
            else { throw fail("passkey origin \(origin) is not scheme://host[:port]") }
            guard scheme == "https" || (scheme == "http" && (host == "localhost" || host.hasSuffix(".localhost"))) else {
                throw fail("passkey origin \(origin) must be https (plain http only on localhost)")
            }
            guard host == rpID || host.hasSuffix("." + rpID) else {
                throw fail("passkey origin \(origin) is not on the relying-party id \(rpID)")
            }
        }
        if requireTrustedAttestation, attestationRoots.values.allSatisfy(\.isEmpty) {
            throw fail("passkey attestation require needs passkey attestation roots")
        }
        for format in attestationRoots.keys where !AttestationStatementVerifier.formats.contains(format) || format == "none" {
            throw fail("passkey attestation roots name \(format), which is not an attestation format")
        }
    }
}
