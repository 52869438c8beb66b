import ArgumentParser
import BioAuthServer

/// Where `bioauth serve` accepts passkeys, and whether it serves its web sign-in page (``PasskeyPolicy``).
struct PasskeyOptions: ParsableArguments {
    @Option(help: "Origins whose pages may use passkeys, comma-separated, e.g. https://www.bank.example (default: none, passkeys off).")
    var passkeyOrigins: String?

    @Option(name: .customLong("passkey-rp-id"), help: "The passkeys' relying-party id, e.g. bank.example (default: the first origin's host).")
    var passkeyRPID: String?

    @Option(name: .customLong("passkey-rp-name"), help: "The name browsers show beside a passkey (default BioAuth).")
    var passkeyRPName: String?

    @Option(
        help: "Which passkey attestation is accepted: none (any that verifies) or require (a chain to --passkey-attestation-roots) (default none)."
    )
    var passkeyAttestation: String?

    @Option(help: "Attestation roots by format, FORMAT=PEM-FILE, comma-separated, e.g. packed=/etc/bioauth/yubico.pem.")
    var passkeyAttestationRoots: String?

    @Flag(help: "Serve the web sign-in page under /web (passkeys and password); without --passkey-origins it uses http://localhost:PORT.")
    var passkeyWeb = false

    /// The options given, by setting key (``ServerSettings``).
    var flags: [String: String] {
        var flags: [String: String] = [:]
        flags["passkeyOrigins"] = passkeyOrigins
        flags["passkeyRpId"] = passkeyRPID
        flags["passkeyRpName"] = passkeyRPName
        flags["passkeyAttestation"] = passkeyAttestation
        flags["passkeyAttestationRoots"] = passkeyAttestationRoots
        flags["passkeyWeb"] = passkeyWeb ? "true" : nil
        return flags
    }
}
