import BioAuthCore
import Crypto
import Foundation
import SwiftASN1
import X509
import _CryptoExtras

/// What an attestation statement proves about where a credential was made (WebAuthn §6.5.4).
public enum PasskeyAttestationType: String, Codable, Hashable, Sendable {
    /// No attestation (`fmt` `none`): the browser or the user withheld it.
    case none
    /// The credential signed its own attestation: it proves possession of the key only.
    case `self`
    /// A certificate chain of the authenticator's maker (packed, fido-u2f, android-key, android-safetynet).
    case basic
    /// An attestation CA that certifies a per-device key (TPM).
    case attestationCA = "attca"
    /// An anonymizing CA that certifies each credential (Apple).
    case anonymizationCA = "anonca"
}

/// A verified attestation statement: its format, its type, and the certificate chain (leaf first) that a trust
/// policy may check against roots.
public struct VerifiedAttestation: Sendable {
    /// The statement format, e.g. `"packed"`.
    public let format: String
    /// What the statement proves.
    public let type: PasskeyAttestationType
    /// `x5c`, leaf first; empty for `none` and self attestation.
    public let chain: [Certificate]
}

/// Verifies attestation statements of the formats WebAuthn Level 3 §8 defines, one function per format, each
/// following the format's verification procedure.
public enum AttestationStatementVerifier {
    /// The formats BioAuth verifies.
    public static let formats = ["none", "packed", "fido-u2f", "apple", "tpm", "android-key", "android-safetynet"]

    /// Verifies `statement` of `format` over the authenticator data `authData` and `clientDataHash`. `time` is when
    /// the statement is judged (only `android-safetynet` carries a timestamp). An unknown format is refused before
    /// anything else is read.
    public static func verify(
        format: String,
        statement: CBOR,
        authData: Data,
        clientDataHash: Data,
        at time: Date
    ) throws(WebAuthnError)
        -> VerifiedAttestation
    {
        guard formats.contains(format) else {
            throw WebAuthnError(.passkeyAttestationFormat, "attestation format \(format.prefix(40)) is not supported")
        }
        return try verify(
            format: format,
            statement: statement,
            authData: try WebAuthnAuthenticatorData(authData),
            clientDataHash: clientDataHash,
            at: time
        )
    }

    static func verify(
        format: String,
        statement: CBOR,
        authData: WebAuthnAuthenticatorData,
        clientDataHash: Data,
        at time: Date
    )
        throws(WebAuthnError) -> VerifiedAttestation
    {
        guard case .map(let pairs) = statement else { throw .attestation("attStmt is not a map") }
        guard let credential = authData.attested else { throw .malformed("the authenticator data has no attested credential") }
        let signed = authData.raw + clientDataHash
        switch format {
        case "none":
            // §8.7: the statement is empty.
            guard pairs.isEmpty else { throw .attestation("a none attestation has an empty statement") }
            return VerifiedAttestation(format: format, type: .none, chain: [])
        case "packed":
            return try packed(statement, credential: credential, signed: signed)
        case "fido-u2f":
            return try fidoU2F(statement, authData: authData, credential: credential, clientDataHash: clientDataHash)
        case "apple":
            return try apple(statement, credential: credential, signed: signed)
        case "tpm":
            return try TPMAttestation.verify(statement, credential: credential, signed: signed)
        case "android-key":
            return try androidKey(statement, credential: credential, signed: signed, clientDataHash: clientDataHash)
        case "android-safetynet":
            return try androidSafetyNet(statement, signed: signed, at: time)
        default:
            throw WebAuthnError(.passkeyAttestationFormat, "attestation format \(format.prefix(40)) is not supported")
        }
    }

    // MARK: Formats

    /// §8.2 Packed: self attestation with the credential key, or basic attestation with `x5c`.
    static func packed(
        _ statement: CBOR,
        credential: WebAuthnAuthenticatorData.AttestedCredential,
        signed: Data
    ) throws(WebAuthnError) -> VerifiedAttestation {
        guard let alg = statement["alg"]?.intValue, let signature = statement["sig"]?.bytesValue else {
            throw .attestation("packed needs alg and sig")
        }
        guard let x5c = statement["x5c"] else {
            // Self attestation: alg is the credential's, and the credential key signed.
            guard alg == credential.publicKey.algorithm.rawValue else { throw .attestation("self attestation's alg is not the credential's") }
            guard credential.publicKey.isValidSignature(signature, for: signed) else {
                throw .attestation("the self attestation signature does not verify")
            }
            return VerifiedAttestation(format: "packed", type: .self, chain: [])
        }
        if let algorithm = COSEAlgorithm(rawValue: alg), algorithm.isMLDSA {
            // An ML-DSA attestation key: its certificate is read by hand, and its chain cannot be checked.
            guard let der = x5c.arrayValue?.first?.bytesValue else { throw .attestation("x5c holds one to eight certificates") }
            let leaf = try MLDSAAttestationCertificate(derEncoded: der)
            guard leaf.algorithm.rawValue == alg, leaf.isValidSignature(signature, for: signed) else {
                throw .attestation("the attestation signature does not verify with the certificate's key")
            }
            try checkPackedCertificate(version3: leaf.version == 2, subject: leaf.subject, extensions: leaf.extensions, credential: credential)
            return VerifiedAttestation(format: "packed", type: .basic, chain: [])
        }
        let chain = try certificates(x5c)
        let leaf = chain[0]
        try verify(signature, over: signed, alg: alg, with: leaf)
        try checkPackedCertificate(version3: leaf.version == .v3, subject: leaf.subject, extensions: leaf.extensions, credential: credential)
        return VerifiedAttestation(format: "packed", type: .basic, chain: chain)
    }

    /// §8.2.1: version 3; subject C, O, OU "Authenticator Attestation", CN; not a CA; the aaguid extension, when
    /// present, equals the authenticator data's.
    static func checkPackedCertificate(
        version3: Bool,
        subject name: DistinguishedName,
        extensions: Certificate.Extensions,
        credential: WebAuthnAuthenticatorData.AttestedCredential
    ) throws(WebAuthnError) {
        guard version3 else { throw .attestation("the attestation certificate is not version 3") }
        let subject = attributes(of: name)
        guard subject[.RDNAttributeType.countryName] != nil, subject[.RDNAttributeType.organizationName] != nil,
            subject[.RDNAttributeType.commonName] != nil,
            subject[.RDNAttributeType.organizationalUnitName] == "Authenticator Attestation"
        else { throw .attestation("the attestation certificate's subject breaks §8.2.1") }
        try requireNotCA(extensions)
        try checkAAGUIDExtension(extensions, credential: credential)
    }

    /// §8.6 FIDO U2F: one P-256 certificate; the signature covers 0x00 ‖ rpIdHash ‖ clientDataHash ‖ credentialId ‖
    /// the credential's uncompressed point.
    static func fidoU2F(
        _ statement: CBOR,
        authData: WebAuthnAuthenticatorData,
        credential: WebAuthnAuthenticatorData.AttestedCredential,
        clientDataHash: Data
    )
        throws(WebAuthnError) -> VerifiedAttestation
    {
        guard let x5c = statement["x5c"], let signature = statement["sig"]?.bytesValue else { throw .attestation("fido-u2f needs x5c and sig") }
        let chain = try certificates(x5c)
        guard chain.count == 1, let key = P256.Signing.PublicKey(chain[0].publicKey) else {
            throw .attestation("fido-u2f needs exactly one certificate with a P-256 key")
        }
        guard credential.publicKey.algorithm == .es256, case .ec(let point) = credential.publicKey.parameters, point.count == 65 else {
            throw .attestation("a fido-u2f credential is an ES256 key")
        }
        let verificationData = Data([0]) + authData.rpIDHash + clientDataHash + credential.credentialID + point
        guard let ecdsa = try? P256.Signing.ECDSASignature(derRepresentation: signature), key.isValidSignature(ecdsa, for: verificationData) else {
            throw .attestation("the fido-u2f signature does not verify")
        }
        return VerifiedAttestation(format: "fido-u2f", type: .basic, chain: chain)
    }

    private static let appleNonceExtension: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 8, 2]

    /// §8.8 Apple anonymous: the credential certificate carries SHA-256(authData ‖ clientDataHash) as a nonce and
    /// certifies the credential key.
    static func apple(
        _ statement: CBOR,
        credential: WebAuthnAuthenticatorData.AttestedCredential,
        signed: Data
    ) throws(WebAuthnError) -> VerifiedAttestation {
        guard let x5c = statement["x5c"] else { throw .attestation("apple needs x5c") }
        let chain = try certificates(x5c)
        let nonce = Data(SHA256.hash(data: signed))
        // The extension is SEQUENCE { [1] EXPLICIT OCTET STRING nonce }.
        guard let value = chain[0].extensions[oid: appleNonceExtension]?.value,
            Data(value) == Data([0x30, 0x24, 0xA1, 0x22, 0x04, 0x20]) + nonce
        else { throw .attestation("the Apple credential certificate's nonce does not match") }
        try requireSameKey(chain[0], credential: credential)
        return VerifiedAttestation(format: "apple", type: .anonymizationCA, chain: chain)
    }

    private static let androidKeyDescription: ASN1ObjectIdentifier = [1, 3, 6, 1, 4, 1, 11129, 2, 1, 17]

    /// §8.4 Android Key: the credential certificate certifies the credential key, and its key description says the
    /// key was generated in the keystore for this challenge, for signing, and not for all applications.
    static func androidKey(
        _ statement: CBOR,
        credential: WebAuthnAuthenticatorData.AttestedCredential,
        signed: Data,
        clientDataHash: Data
    )
        throws(WebAuthnError) -> VerifiedAttestation
    {
        guard let alg = statement["alg"]?.intValue, let signature = statement["sig"]?.bytesValue, let x5c = statement["x5c"] else {
            throw .attestation("android-key needs alg, sig and x5c")
        }
        let chain = try certificates(x5c)
        try verify(signature, over: signed, alg: alg, with: chain[0])
        try requireSameKey(chain[0], credential: credential)
        guard let description = chain[0].extensions[oid: androidKeyDescription]?.value else {
            throw .attestation("the credential certificate has no key description")
        }
        do {
            let root = try DER.parse(Array(description))
            guard case .constructed(let nodes) = root.content else { throw WebAuthnError.attestation("the key description is not a sequence") }
            let fields = Array(nodes)
            guard fields.count >= 8, case .primitive(let challenge) = fields[4].content else {
                throw WebAuthnError.attestation("the key description is too short")
            }
            guard Data(challenge) == clientDataHash else { throw WebAuthnError.attestation("attestationChallenge is not the client data hash") }
            let software = try authorizations(fields[6])
            let tee = try authorizations(fields[7])
            // allApplications [600] in neither list; origin [702] GENERATED (0) and purpose [1] SIGN (2) in their union.
            guard software[600] == nil, tee[600] == nil else { throw WebAuthnError.attestation("the key is usable by all applications") }
            guard let originNode = tee[702] ?? software[702], try Int(derEncoded: originNode) == 0 else {
                throw WebAuthnError.attestation("the key was not generated in the keystore")
            }
            let purposes = try [tee[1], software[1]].compactMap { $0 }.flatMap { node -> [Int] in
                guard case .constructed(let items) = node.content else { return [] }
                return try items.map { try Int(derEncoded: $0) }
            }
            guard purposes.contains(2) else { throw WebAuthnError.attestation("the key's purposes do not include signing") }
        } catch let error as WebAuthnError {
            throw error
        } catch {
            throw .attestation("the key description is not valid DER")
        }
        return VerifiedAttestation(format: "android-key", type: .basic, chain: chain)
    }

    /// The explicitly tagged entries of an Android AuthorizationList, by tag number, each unwrapped.
    private static func authorizations(_ node: ASN1Node) throws -> [UInt: ASN1Node] {
        guard case .constructed(let items) = node.content else { throw WebAuthnError.attestation("an authorization list is not a sequence") }
        var result: [UInt: ASN1Node] = [:]
        for item in items where item.identifier.tagClass == .contextSpecific {
            guard case .constructed(let inner) = item.content, let value = inner.first(where: { _ in true }) else { continue }
            result[item.identifier.tagNumber] = value
        }
        return result
    }

    /// §8.5 Android SafetyNet: a JWS signed by `attest.android.com` whose nonce is base64(SHA-256(authData ‖
    /// clientDataHash)) and whose device passed the CTS profile check, issued at most a minute after `time` and at
    /// most ten minutes before it.
    static func androidSafetyNet(_ statement: CBOR, signed: Data, at time: Date) throws(WebAuthnError) -> VerifiedAttestation {
        guard statement["ver"]?.textValue?.isEmpty == false, let response = statement["response"]?.bytesValue,
            let jws = String(data: response, encoding: .utf8)
        else { throw .attestation("android-safetynet needs ver and response") }
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        // JWS segments are base64url without padding (RFC 7515 §2), the wire's own encoding.
        guard parts.count == 3, let headerData = Base64URL.decode(String(parts[0])), let payloadData = Base64URL.decode(String(parts[1])),
            let signature = Base64URL.decode(String(parts[2])),
            let header = (try? JSONSerialization.jsonObject(with: headerData)) as? [String: Any],
            let payload = (try? JSONSerialization.jsonObject(with: payloadData)) as? [String: Any],
            let x5c = header["x5c"] as? [String], header["alg"] as? String == "RS256"
        else { throw .attestation("the SafetyNet response is not an RS256 JWS with x5c") }
        let chain = try certificates(.array(x5c.map { .bytes(Data(base64Encoded: $0) ?? Data()) }))
        let names = chain[0].subject.flatMap { $0 }.filter { $0.type == .RDNAttributeType.commonName }.map { String(describing: $0.value) }
        guard names.contains("attest.android.com") else { throw .attestation("the SafetyNet certificate is not for attest.android.com") }
        guard chain[0].publicKey.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8), signatureAlgorithm: .sha256WithRSAEncryption)
        else {
            throw .attestation("the SafetyNet JWS signature does not verify")
        }
        guard payload["nonce"] as? String == Data(SHA256.hash(data: signed)).base64EncodedString() else {
            throw .attestation("the SafetyNet nonce does not match")
        }
        guard payload["ctsProfileMatch"] as? Bool == true else { throw .attestation("the device failed SafetyNet's CTS profile check") }
        guard let milliseconds = payload["timestampMs"] as? Double else { throw .attestation("the SafetyNet response has no timestamp") }
        let issued = Date(timeIntervalSince1970: milliseconds / 1000)
        guard issued <= time.addingTimeInterval(60), issued >= time.addingTimeInterval(-600) else {
            throw .attestation("the SafetyNet response is not fresh")
        }
        return VerifiedAttestation(format: "android-safetynet", type: .basic, chain: chain)
    }

    // MARK: Shared checks

    /// `x5c`: one to eight DER certificates, leaf first.
    static func certificates(_ x5c: CBOR) throws(WebAuthnError) -> [Certificate] {
        guard let items = x5c.arrayValue, (1...8).contains(items.count) else { throw .attestation("x5c holds one to eight certificates") }
        var chain: [Certificate] = []
        for item in items {
            guard let der = item.bytesValue, let certificate = try? Certificate(derEncoded: [UInt8](der)) else {
                throw .attestation("x5c holds a certificate that does not parse")
            }
            chain.append(certificate)
        }
        return chain
    }

    /// The X.509 signature algorithm a COSE algorithm names, for keys in certificates.
    static func signatureAlgorithm(_ alg: Int) -> Certificate.SignatureAlgorithm? {
        switch COSEAlgorithm(rawValue: alg) {
        case .es256: .ecdsaWithSHA256
        case .es384: .ecdsaWithSHA384
        case .es512: .ecdsaWithSHA512
        case .edDSA: .ed25519
        case .rs256: .sha256WithRSAEncryption
        case .rs384: .sha384WithRSAEncryption
        case .rs512: .sha512WithRSAEncryption
        case .rs1: .sha1WithRSAEncryption
        default: nil
        }
    }

    /// Verifies an attestation signature made with the certificate's key.
    static func verify(_ signature: Data, over data: Data, alg: Int, with certificate: Certificate) throws(WebAuthnError) {
        guard let algorithm = signatureAlgorithm(alg) else {
            throw WebAuthnError(.passkeyUnsupportedAlgorithm, "attestation algorithm \(alg) is not supported")
        }
        guard certificate.publicKey.isValidSignature(signature, for: data, signatureAlgorithm: algorithm) else {
            throw .attestation("the attestation signature does not verify with the certificate's key")
        }
    }

    /// The certificate's public key is the credential's.
    static func requireSameKey(_ certificate: Certificate, credential: WebAuthnAuthenticatorData.AttestedCredential) throws(WebAuthnError) {
        let certified: COSEKey.Parameters?
        if let key = P256.Signing.PublicKey(certificate.publicKey) {
            certified = .ec(key.x963Representation)
        } else if let key = P384.Signing.PublicKey(certificate.publicKey) {
            certified = .ec(key.x963Representation)
        } else if let key = P521.Signing.PublicKey(certificate.publicKey) {
            certified = .ec(key.x963Representation)
        } else if let key = Curve25519.Signing.PublicKey(certificate.publicKey) {
            certified = .ed25519(key.rawRepresentation)
        } else if let key = _RSA.Signing.PublicKey(certificate.publicKey), let parts = rsaParts(key) {
            certified = .rsa(n: parts.n, e: parts.e)
        } else {
            certified = nil
        }
        guard certified == credential.publicKey.parameters else { throw .attestation("the certificate does not certify the credential key") }
    }

    /// Modulus and exponent of an RSA key, without leading zero bytes (from its PKCS #1 DER).
    static func rsaParts(_ key: _RSA.Signing.PublicKey) -> (n: Data, e: Data)? {
        guard let node = try? DER.parse(Array(key.pkcs1DERRepresentation)), case .constructed(let items) = node.content else { return nil }
        let values = Array(items)
        guard values.count == 2, case .primitive(let n) = values[0].content, case .primitive(let e) = values[1].content else { return nil }
        return (Data(n.drop { $0 == 0 }), Data(e.drop { $0 == 0 }))
    }

    static func requireNotCA(_ extensions: Certificate.Extensions) throws(WebAuthnError) {
        let constraints: BasicConstraints?
        do { constraints = try extensions.basicConstraints } catch { throw .attestation("the basic constraints do not parse") }
        if case .isCertificateAuthority = constraints { throw .attestation("the attestation certificate is a CA") }
    }

    private static let aaguidExtension: ASN1ObjectIdentifier = [1, 3, 6, 1, 4, 1, 45724, 1, 1, 4]

    /// id-fido-gen-ce-aaguid, when present and not critical, holds the authenticator data's aaguid (an OCTET STRING).
    static func checkAAGUIDExtension(
        _ extensions: Certificate.Extensions,
        credential: WebAuthnAuthenticatorData.AttestedCredential
    ) throws(WebAuthnError) {
        guard let ext = extensions[oid: aaguidExtension] else { return }
        guard !ext.critical, Data(ext.value) == Data([0x04, 0x10]) + credential.aaguid else {
            throw .attestation("the certificate's aaguid extension does not match the authenticator data")
        }
    }

    /// Each attribute of a distinguished name by type (the last one wins), as text.
    static func attributes(of name: DistinguishedName) -> [ASN1ObjectIdentifier: String] {
        var result: [ASN1ObjectIdentifier: String] = [:]
        for attribute in name.flatMap({ $0 }) { result[attribute.type] = String(describing: attribute.value) }
        return result
    }

}
