import Crypto
import Foundation
import SwiftASN1
import X509

/// An attestation certificate whose key is ML-DSA, read field by field: swift-certificates 1.21 does not parse
/// ML-DSA public keys, so packed attestation with an ML-DSA key (FIDO's post-quantum authenticators) reads the
/// parts §8.2.1 checks itself. Such a chain cannot be verified to a root, so the attestation is never "trusted".
struct MLDSAAttestationCertificate {
    let version: Int
    let subject: DistinguishedName
    let extensions: Certificate.Extensions
    let algorithm: COSEAlgorithm
    let publicKey: Data

    private static let algorithms: [ASN1ObjectIdentifier: COSEAlgorithm] = [
        [2, 16, 840, 1, 101, 3, 4, 3, 17]: .mlDSA44, [2, 16, 840, 1, 101, 3, 4, 3, 18]: .mlDSA65, [2, 16, 840, 1, 101, 3, 4, 3, 19]: .mlDSA87,
    ]

    init(derEncoded der: Data) throws(WebAuthnError) {
        do {
            let root = try DER.parse(Array(der))
            guard case .constructed(let certificate) = root.content, let tbs = certificate.first(where: { _ in true }),
                case .constructed(let tbsNodes) = tbs.content
            else { throw WebAuthnError.attestation("the certificate is not a sequence") }
            var fields = Array(tbsNodes)[...]
            // [0] EXPLICIT version (v3 is 2).
            var version = 0
            if let first = fields.first, first.identifier == ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific),
                case .constructed(let inner) = first.content, let value = inner.first(where: { _ in true })
            {
                version = try Int(derEncoded: value)
                fields = fields.dropFirst()
            }
            // serial, signature, issuer, validity, subject, subjectPublicKeyInfo, then optional tagged fields.
            guard fields.count >= 6 else { throw WebAuthnError.attestation("the certificate is too short") }
            let values = Array(fields)
            subject = try DistinguishedName(derEncoded: values[4])
            guard case .constructed(let spki) = values[5].content, spki.count(where: { _ in true }) == 2 else {
                throw WebAuthnError.attestation("the subject public key info is malformed")
            }
            let spkiValues = Array(spki)
            guard case .constructed(let algorithmIdentifier) = spkiValues[0].content, let oidNode = algorithmIdentifier.first(where: { _ in true })
            else {
                throw WebAuthnError.attestation("the key's algorithm identifier is malformed")
            }
            guard let algorithm = Self.algorithms[try ASN1ObjectIdentifier(derEncoded: oidNode)] else {
                throw WebAuthnError(.passkeyUnsupportedAlgorithm, "the attestation certificate's key algorithm is not supported")
            }
            self.algorithm = algorithm
            publicKey = Data(try ASN1BitString(derEncoded: spkiValues[1]).bytes)
            var extensions: [Certificate.Extension] = []
            for node in values.dropFirst(6) where node.identifier == ASN1Identifier(tagWithNumber: 3, tagClass: .contextSpecific) {
                guard case .constructed(let wrapper) = node.content, let sequence = wrapper.first(where: { _ in true }),
                    case .constructed(let items) = sequence.content
                else { throw WebAuthnError.attestation("the certificate's extensions are malformed") }
                extensions = try items.map { try Certificate.Extension(derEncoded: $0) }
            }
            self.extensions = try Certificate.Extensions(extensions)
            self.version = version
        } catch let error as WebAuthnError {
            throw error
        } catch {
            throw .attestation("x5c holds a certificate that does not parse")
        }
    }

    /// Whether `signature` is this certificate's key's ML-DSA signature of `data`.
    func isValidSignature(_ signature: Data, for data: Data) -> Bool {
        MLDSAPublicKey(algorithm: algorithm, rawRepresentation: publicKey)?.isValidSignature(signature, for: data) ?? false
    }
}
