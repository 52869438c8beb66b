import Foundation
@_spi(FixedExpiryValidationTime) import X509

/// Certificate chain validation as App Attest and passkey attestation both need it: RFC 5280 at a given time (the
/// time the attestation is judged, which tests and vectors fix), against the roots the caller trusts.
enum CertificateChain {
    /// Whether `leaf`, through `intermediates`, chains to one of `roots`, every certificate valid at `time`.
    static func verifies(leaf: Certificate, intermediates: some Sequence<Certificate>, roots: [Certificate], at time: Date) async -> Bool {
        var verifier = Verifier(rootCertificates: CertificateStore(roots)) { RFC5280Policy(fixedExpiryValidationTime: time) }
        guard case .validCertificate = await verifier.validate(leaf: leaf, intermediates: CertificateStore(intermediates)) else { return false }
        return true
    }
}
