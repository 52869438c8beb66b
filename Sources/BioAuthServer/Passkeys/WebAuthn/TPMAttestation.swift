import BioAuthCore
import Crypto
import Foundation
import SwiftASN1
import X509

/// §8.3 TPM attestation: the TPM's attestation key (certified by `x5c`'s AIK certificate) signed a TPMS_ATTEST
/// structure that names the credential's public area and carries the hash of authData ‖ clientDataHash.
enum TPMAttestation {
    private static let aikCertificateUsage = ExtendedKeyUsage.Usage(oid: [2, 23, 133, 8, 3])

    static func verify(
        _ statement: CBOR,
        credential: WebAuthnAuthenticatorData.AttestedCredential,
        signed: Data
    ) throws(WebAuthnError) -> VerifiedAttestation {
        // ver must be "2.0" when present; some Windows Hello statements omit it, and it protects nothing.
        if let version = statement["ver"], version.textValue != "2.0" { throw .attestation("tpm's ver is not 2.0") }
        guard let alg = statement["alg"]?.intValue, let signature = statement["sig"]?.bytesValue, let x5c = statement["x5c"],
            let certInfo = statement["certInfo"]?.bytesValue, let pubArea = statement["pubArea"]?.bytesValue
        else { throw .attestation("tpm needs alg, sig, x5c, certInfo and pubArea (ECDAA is not supported)") }

        // The public area describes the credential key.
        let publicArea = try PublicArea(pubArea)
        guard publicArea.parameters == credential.publicKey.parameters else { throw .attestation("pubArea is not the credential key") }

        // certInfo: magic TPM_GENERATED, type TPM_ST_ATTEST_CERTIFY, extraData = hash(authData ‖ clientDataHash) with
        // alg's hash, and the certified name is nameAlg ‖ H_nameAlg(pubArea).
        var reader = TPMReader(certInfo)
        guard try reader.uint32() == 0xFF54_4347 else { throw .attestation("certInfo.magic is not TPM_GENERATED_VALUE") }
        guard try reader.uint16() == 0x8017 else { throw .attestation("certInfo.type is not TPM_ST_ATTEST_CERTIFY") }
        _ = try reader.sized()  // qualifiedSigner
        let extraData = try reader.sized()
        try reader.skip(17 + 8)  // clockInfo, firmwareVersion
        let name = try reader.sized()
        _ = try reader.sized()  // qualifiedName
        guard reader.atEnd else { throw .attestation("certInfo has bytes left over") }
        guard let expected = digest(signed, cose: alg), extraData == expected else {
            throw .attestation("certInfo.extraData is not the hash of the signed data")
        }
        guard name.count >= 2, let nameDigest = digest(pubArea, tpm: UInt16(name[name.startIndex]) << 8 | UInt16(name[name.startIndex + 1])),
            name.dropFirst(2) == nameDigest
        else { throw .attestation("certInfo does not name pubArea") }

        // The AIK certificate signed certInfo and meets §8.3.1.
        let chain = try AttestationStatementVerifier.certificates(x5c)
        let aik = chain[0]
        try AttestationStatementVerifier.verify(signature, over: certInfo, alg: alg, with: aik)
        guard aik.version == .v3 else { throw .attestation("the AIK certificate is not version 3") }
        guard aik.subject.isEmpty else { throw .attestation("the AIK certificate's subject is not empty") }
        guard aik.extensions[oid: .X509ExtensionID.subjectAlternativeName] != nil else {
            throw .attestation("the AIK certificate has no subject alternative name")
        }
        let usages: ExtendedKeyUsage?
        do { usages = try aik.extensions.extendedKeyUsage } catch { throw .attestation("the AIK certificate's extended key usage does not parse") }
        guard usages?.contains(aikCertificateUsage) == true else { throw .attestation("the AIK certificate lacks tcg-kp-AIKCertificate") }
        try AttestationStatementVerifier.requireNotCA(aik.extensions)
        try AttestationStatementVerifier.checkAAGUIDExtension(aik.extensions, credential: credential)
        return VerifiedAttestation(format: "tpm", type: .attestationCA, chain: chain)
    }

    /// The hash a COSE signature algorithm uses.
    static func digest(_ data: Data, cose alg: Int) -> Data? {
        switch COSEAlgorithm(rawValue: alg) {
        case .rs1: Data(Insecure.SHA1.hash(data: data))
        case .es256, .rs256, .ps256: Data(SHA256.hash(data: data))
        case .es384, .rs384: Data(SHA384.hash(data: data))
        case .es512, .rs512: Data(SHA512.hash(data: data))
        default: nil
        }
    }

    /// The hash a TPM_ALG_ID names.
    static func digest(_ data: Data, tpm alg: UInt16) -> Data? {
        switch alg {
        case 0x0004: Data(Insecure.SHA1.hash(data: data))
        case 0x000B: Data(SHA256.hash(data: data))
        case 0x000C: Data(SHA384.hash(data: data))
        case 0x000D: Data(SHA512.hash(data: data))
        default: nil
        }
    }

    /// TPMT_PUBLIC: the key's type and its public parameters.
    struct PublicArea {
        let parameters: COSEKey.Parameters

        init(_ data: Data) throws(WebAuthnError) {
            var reader = TPMReader(data)
            let type = try reader.uint16()
            _ = try reader.uint16()  // nameAlg
            _ = try reader.uint32()  // objectAttributes
            _ = try reader.sized()  // authPolicy
            switch type {
            case 0x0001:  // TPM_ALG_RSA: symmetric, scheme, keyBits, exponent; unique = modulus
                _ = try reader.uint16()
                _ = try reader.uint16()
                _ = try reader.uint16()
                let exponent = try reader.uint32()
                let modulus = try reader.sized()
                let e = exponent == 0 ? Data([0x01, 0x00, 0x01]) : Data(withUnsafeBytes(of: exponent.bigEndian, Array.init).drop { $0 == 0 })
                parameters = .rsa(n: modulus.drop { $0 == 0 }, e: e)
            case 0x0023:  // TPM_ALG_ECC: symmetric, scheme, curveID, kdf; unique = x, y
                _ = try reader.uint16()
                _ = try reader.uint16()
                let curve = try reader.uint16()
                _ = try reader.uint16()
                let x = try reader.sized()
                let y = try reader.sized()
                let size = [0x0003: 32, 0x0004: 48, 0x0005: 66][curve]
                guard let size, x.count == size, y.count == size else { throw .attestation("pubArea has an unsupported curve") }
                parameters = .ec(Data([0x04]) + x + y)
            default:
                throw .attestation("pubArea has an unsupported key type")
            }
            guard reader.atEnd else { throw .attestation("pubArea has bytes left over") }
        }
    }

    /// Big-endian reads over a TPM structure; running off the end is an attestation error, never a trap.
    struct TPMReader {
        private let bytes: [UInt8]
        private var position = 0
        init(_ data: Data) { bytes = [UInt8](data) }
        var atEnd: Bool { position == bytes.count }

        mutating func take(_ count: Int) throws(WebAuthnError) -> Data {
            guard count >= 0, bytes.count - position >= count else { throw .attestation("a TPM structure is truncated") }
            defer { position += count }
            return Data(bytes[position..<position + count])
        }
        mutating func skip(_ count: Int) throws(WebAuthnError) { _ = try take(count) }
        mutating func uint16() throws(WebAuthnError) -> UInt16 { try take(2).reduce(0) { $0 << 8 | UInt16($1) } }
        mutating func uint32() throws(WebAuthnError) -> UInt32 { try take(4).reduce(0) { $0 << 8 | UInt32($1) } }
        /// A TPM2B: a 16-bit size, then that many bytes.
        mutating func sized() throws(WebAuthnError) -> Data { try take(Int(try uint16())) }
    }
}
