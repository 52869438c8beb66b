import BioAuthCore
import Crypto
import Foundation
import _CryptoExtras

/// A COSE algorithm identifier (the IANA "COSE Algorithms" registry) that BioAuth verifies.
public enum COSEAlgorithm: Int, CaseIterable, Codable, Hashable, Sendable {
    /// ECDSA over P-256 with SHA-256.
    case es256 = -7
    /// ECDSA over P-384 with SHA-384.
    case es384 = -35
    /// ECDSA over P-521 with SHA-512.
    case es512 = -36
    /// Ed25519.
    case edDSA = -8
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    case rs256 = -257
    /// RSASSA-PKCS1-v1_5 with SHA-384.
    case rs384 = -258
    /// RSASSA-PKCS1-v1_5 with SHA-512.
    case rs512 = -259
    /// RSASSA-PSS with SHA-256.
    case ps256 = -37
    /// RSASSA-PKCS1-v1_5 with SHA-1: only for TPM attestation statements some Windows Hello devices still sign;
    /// never accepted as a credential's algorithm.
    case rs1 = -65535
    /// ML-DSA-44 (FIPS 204).
    case mlDSA44 = -48
    /// ML-DSA-65 (FIPS 204).
    case mlDSA65 = -49
    /// ML-DSA-87 (FIPS 204).
    case mlDSA87 = -50

    /// The algorithms a new passkey may use by default, in the order the server offers them: ES256 (every
    /// platform authenticator), EdDSA, RS256 (Windows Hello), then the post-quantum ML-DSA keys.
    public static let credentialDefaults: [COSEAlgorithm] =
        [.es256, .edDSA, .es384, .es512, .rs256, .ps256] + (MLDSAPublicKey.supportsMLDSA44 ? [.mlDSA44] : []) + [.mlDSA65, .mlDSA87]

    /// Whether this is one of the three ML-DSA parameter sets.
    var isMLDSA: Bool { self == .mlDSA44 || self == .mlDSA65 || self == .mlDSA87 }
}

/// A credential public key read from its COSE_Key encoding (RFC 9052 §7, RFC 9053 §7, the ML-DSA draft's AKP
/// key type), ready to verify signatures.
public struct COSEKey: Sendable {
    /// The key's algorithm, from its `alg` parameter (3).
    public let algorithm: COSEAlgorithm
    private let key: Key

    private enum Key: Sendable {
        case p256(P256.Signing.PublicKey)
        case p384(P384.Signing.PublicKey)
        case p521(P521.Signing.PublicKey)
        case ed25519(Curve25519.Signing.PublicKey)
        case rsa(_RSA.Signing.PublicKey, n: Data, e: Data)
        case mlDSA(MLDSAPublicKey)
    }

    /// Reads a key from its CBOR encoding; `data` must hold exactly one COSE_Key.
    public init(cbor data: Data) throws(WebAuthnError) {
        let item: CBOR
        do { item = try CBORDecoder(maxInputSize: 8 * 1024, maxDepth: 4, maxItems: 32).decode(data) } catch {
            throw .publicKey("the credential public key is not CBOR (\(error.code))")
        }
        try self.init(item)
    }

    /// Reads a key from a decoded COSE_Key map.
    public init(_ item: CBOR) throws(WebAuthnError) {
        guard case .map = item else { throw .publicKey("a COSE key is a map") }
        guard let kty = item[int: 1]?.intValue else { throw .publicKey("the COSE key has no kty") }
        guard let rawAlgorithm = item[int: 3]?.intValue else { throw .publicKey("the COSE key has no alg") }
        guard let algorithm = COSEAlgorithm(rawValue: rawAlgorithm) else {
            throw WebAuthnError(.passkeyUnsupportedAlgorithm, "COSE algorithm \(rawAlgorithm) is not supported")
        }
        self.algorithm = algorithm
        switch (kty, algorithm) {
        case (2, .es256), (2, .es384), (2, .es512):
            // EC2: crv (-1), x (-2), y (-3). The curve must be the algorithm's.
            guard let curve = item[int: -1]?.intValue, let x = item[int: -2]?.bytesValue, let y = item[int: -3]?.bytesValue else {
                throw .publicKey("an EC2 key needs crv, x and y")
            }
            let point = Data([0x04]) + x + y
            do {
                switch (algorithm, curve) {
                case (.es256, 1): key = .p256(try P256.Signing.PublicKey(x963Representation: point))
                case (.es384, 2): key = .p384(try P384.Signing.PublicKey(x963Representation: point))
                case (.es512, 3): key = .p521(try P521.Signing.PublicKey(x963Representation: point))
                default: throw WebAuthnError.publicKey("curve \(curve) does not belong to algorithm \(rawAlgorithm)")
                }
            } catch let error as WebAuthnError {
                throw error
            } catch {
                throw .publicKey("the EC2 point is not on its curve")
            }
        case (1, .edDSA):
            // OKP: crv (-1) must be Ed25519 (6), x (-2) the 32-byte key.
            guard item[int: -1]?.intValue == 6, let x = item[int: -2]?.bytesValue,
                let ed = try? Curve25519.Signing.PublicKey(rawRepresentation: x)
            else { throw .publicKey("an OKP key must be Ed25519 with a 32-byte x") }
            key = .ed25519(ed)
        case (3, .rs256), (3, .rs384), (3, .rs512), (3, .ps256), (3, .rs1):
            // RSA: n (-1), e (-2). Keys under 2048 bits are refused.
            guard let n = item[int: -1]?.bytesValue, let e = item[int: -2]?.bytesValue else { throw .publicKey("an RSA key needs n and e") }
            guard let rsa = try? _RSA.Signing.PublicKey(n: n, e: e) else { throw .publicKey("the RSA key is invalid or shorter than 2048 bits") }
            key = .rsa(rsa, n: n, e: e)
        case (7, .mlDSA44) where !MLDSAPublicKey.supportsMLDSA44:
            throw WebAuthnError(.passkeyUnsupportedAlgorithm, "COSE algorithm \(rawAlgorithm) is not supported by this build")
        case (7, .mlDSA44), (7, .mlDSA65), (7, .mlDSA87):
            // AKP: pub (-1), the FIPS 204 encoding of the public key.
            guard let pub = item[int: -1]?.bytesValue else { throw .publicKey("an AKP key needs pub") }
            guard let mlDSA = MLDSAPublicKey(algorithm: algorithm, rawRepresentation: pub) else {
                throw .publicKey("the ML-DSA public key is not a key of its parameter set")
            }
            key = .mlDSA(mlDSA)
        default:
            throw .publicKey("key type \(kty) does not fit algorithm \(rawAlgorithm)")
        }
    }

    /// Whether `signature` (DER for ECDSA, raw for EdDSA, RSA and ML-DSA) is this key's signature of `data`.
    public func isValidSignature(_ signature: Data, for data: Data) -> Bool {
        switch key {
        case .p256(let key):
            guard let signature = try? P256.Signing.ECDSASignature(derRepresentation: signature) else { return false }
            return key.isValidSignature(signature, for: data)
        case .p384(let key):
            guard let signature = try? P384.Signing.ECDSASignature(derRepresentation: signature) else { return false }
            return key.isValidSignature(signature, for: data)
        case .p521(let key):
            guard let signature = try? P521.Signing.ECDSASignature(derRepresentation: signature) else { return false }
            return key.isValidSignature(signature, for: data)
        case .ed25519(let key):
            return key.isValidSignature(signature, for: data)
        case .rsa(let key, _, _):
            let rsaSignature = _RSA.Signing.RSASignature(rawRepresentation: signature)
            switch algorithm {
            case .rs256: return key.isValidSignature(rsaSignature, for: SHA256.hash(data: data), padding: .insecurePKCS1v1_5)
            case .rs384: return key.isValidSignature(rsaSignature, for: SHA384.hash(data: data), padding: .insecurePKCS1v1_5)
            case .rs512: return key.isValidSignature(rsaSignature, for: SHA512.hash(data: data), padding: .insecurePKCS1v1_5)
            case .ps256: return key.isValidSignature(rsaSignature, for: SHA256.hash(data: data), padding: .PSS)
            case .rs1: return key.isValidSignature(rsaSignature, for: Insecure.SHA1.hash(data: data), padding: .insecurePKCS1v1_5)
            default: return false
            }
        case .mlDSA(let key):
            return key.isValidSignature(signature, for: data)
        }
    }

    /// The key's public parameters, for comparing it with a key an attestation certificate or a TPM's public
    /// area carries.
    enum Parameters: Equatable {
        /// An elliptic-curve point (X9.63, uncompressed).
        case ec(Data)
        case ed25519(Data)
        /// Modulus and exponent, without leading zero bytes.
        case rsa(n: Data, e: Data)
        case mlDSA(Data)
    }

    var parameters: Parameters {
        switch key {
        case .p256(let key): .ec(key.x963Representation)
        case .p384(let key): .ec(key.x963Representation)
        case .p521(let key): .ec(key.x963Representation)
        case .ed25519(let key): .ed25519(key.rawRepresentation)
        case .rsa(_, let n, let e): .rsa(n: n.drop { $0 == 0 }, e: e.drop { $0 == 0 })
        case .mlDSA(let key): .mlDSA(key.rawRepresentation)
        }
    }
}

extension CBOR {
    /// The value under integer key `key` of a map (COSE labels are integers).
    subscript(int key: Int) -> CBOR? {
        guard case .map(let pairs) = self else { return nil }
        let wanted: CBOR = key >= 0 ? .unsigned(UInt64(key)) : .negative(UInt64(-1 - key))
        return pairs.first { $0.key == wanted }?.value
    }

    /// The value of an integer item that fits an `Int`.
    var intValue: Int? {
        switch self {
        case .unsigned(let value): value <= UInt64(Int.max) ? Int(value) : nil
        case .negative(let value): value < UInt64(Int.max) ? -1 - Int(value) : nil
        default: nil
        }
    }
}
