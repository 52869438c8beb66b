import Crypto
import Foundation

#if canImport(CCryptoBoringSSL)
internal import CCryptoBoringSSL
#endif

/// An ML-DSA (FIPS 204) public key of any of the three parameter sets, ready to verify pure ML-DSA signatures
/// with an empty context, as WebAuthn and COSE use them.
///
/// ML-DSA-65 and ML-DSA-87 are swift-crypto's `MLDSA65` and `MLDSA87`. swift-crypto (4.5) and CryptoKit leave
/// ML-DSA-44 out of their Swift API, but the BoringSSL that swift-crypto builds into every server binary (its
/// `_CryptoExtras` product, which we use for RSA, links it on every platform) has it: the same FIPS 204 code,
/// with its known-answer self tests, that verifies `MLDSA65` and `MLDSA87`. ML-DSA-44 is verified through
/// that library's C interface here, in this one file; nothing about ML-DSA is implemented in BioAuth.
///
/// If a future swift-crypto stops exposing that module, `supportsMLDSA44` becomes `false`: ML-DSA-44 keys
/// are then refused as an unsupported algorithm and no longer offered, and the shared ML-DSA-44 vectors fail
/// in `WebAuthnVectorTests`, so the loss cannot go unnoticed.
struct MLDSAPublicKey: Sendable {
    /// The key's parameter set.
    let algorithm: COSEAlgorithm
    private let key: Key

    private enum Key: Sendable {
        /// The FIPS 204 encoding; it parsed when the key was made, and is parsed again for each verification.
        case mlDSA44(Data)
        case mlDSA65(MLDSA65.PublicKey)
        case mlDSA87(MLDSA87.PublicKey)
    }

    /// Whether this build can verify ML-DSA-44 (COSE −48).
    static var supportsMLDSA44: Bool {
        #if canImport(CCryptoBoringSSL)
        true
        #else
        false
        #endif
    }

    /// The key from its FIPS 204 encoding (COSE AKP `pub`, or a certificate's subjectPublicKey), or `nil` if
    /// `algorithm` is not ML-DSA, this build lacks it, or the bytes are not a key of that parameter set.
    init?(algorithm: COSEAlgorithm, rawRepresentation: Data) {
        self.algorithm = algorithm
        switch algorithm {
        case .mlDSA44:
            guard Self.parseMLDSA44(rawRepresentation) != nil else { return nil }
            key = .mlDSA44(rawRepresentation)
        case .mlDSA65:
            guard let key = try? MLDSA65.PublicKey(rawRepresentation: rawRepresentation) else { return nil }
            self.key = .mlDSA65(key)
        case .mlDSA87:
            guard let key = try? MLDSA87.PublicKey(rawRepresentation: rawRepresentation) else { return nil }
            self.key = .mlDSA87(key)
        default:
            return nil
        }
    }

    /// The key's FIPS 204 encoding.
    var rawRepresentation: Data {
        switch key {
        case .mlDSA44(let raw): raw
        case .mlDSA65(let key): key.rawRepresentation
        case .mlDSA87(let key): key.rawRepresentation
        }
    }

    /// Whether `signature` is this key's ML-DSA signature of `data` (empty context).
    func isValidSignature(_ signature: Data, for data: Data) -> Bool {
        switch key {
        case .mlDSA44(let raw): Self.verifyMLDSA44(publicKey: raw, signature: signature, data: data)
        case .mlDSA65(let key): key.isValidSignature(signature, for: data)
        case .mlDSA87(let key): key.isValidSignature(signature, for: data)
        }
    }

    #if canImport(CCryptoBoringSSL)
    /// BoringSSL's parsed form of an ML-DSA-44 key, or `nil` if `raw` is not exactly one encoded key.
    private static func parseMLDSA44(_ raw: Data) -> MLDSA44_public_key? {
        guard raw.count == Int(MLDSA44_PUBLIC_KEY_BYTES) else { return nil }
        var key = MLDSA44_public_key()
        let parsed = raw.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) -> Bool in
            var cbs = CBS(data: buffer.bindMemory(to: UInt8.self).baseAddress, len: buffer.count)
            return CCryptoBoringSSL_MLDSA44_parse_public_key(&key, &cbs) == 1
        }
        return parsed ? key : nil
    }

    private static func verifyMLDSA44(publicKey raw: Data, signature: Data, data: Data) -> Bool {
        guard var key = parseMLDSA44(raw), signature.count == Int(MLDSA44_SIGNATURE_BYTES) else { return false }
        return signature.withUnsafeBytes { (signatureBytes: UnsafeRawBufferPointer) in
            data.withUnsafeBytes { (dataBytes: UnsafeRawBufferPointer) in
                CCryptoBoringSSL_MLDSA44_verify(
                    &key,
                    signatureBytes.bindMemory(to: UInt8.self).baseAddress,
                    signatureBytes.count,
                    dataBytes.bindMemory(to: UInt8.self).baseAddress,
                    dataBytes.count,
                    nil,
                    0
                ) == 1
            }
        }
    }
    #else
    private static func parseMLDSA44(_ raw: Data) -> Void? { nil }
    private static func verifyMLDSA44(publicKey raw: Data, signature: Data, data: Data) -> Bool { false }
    #endif
}
