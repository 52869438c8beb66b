import Crypto
import Foundation

/// A device key's public half: a P-256 point in uncompressed X9.63 form (65 bytes, `04 ‖ X ‖ Y`).
///
/// The key id is SHA-256 of those 65 bytes, so client and server derive the same id from the key itself and
/// a client cannot claim another key's id.
public struct DevicePublicKey: Hashable, Sendable, Codable {
    /// The 65-byte X9.63 representation.
    public let x963Representation: Data
    /// SHA-256 of ``x963Representation`` (32 bytes).
    public let keyID: Data

    private let key: P256.Signing.PublicKey

    /// Parses and validates an X9.63 public key.
    ///
    /// - Throws: ``DeviceKeyFormatError`` when the bytes are not 65 long, do not start with `0x04`, or are not
    ///   a point on the P-256 curve.
    public init(x963Representation bytes: Data) throws(DeviceKeyFormatError) {
        guard bytes.count == 65 else { throw DeviceKeyFormatError(.wrongLength) }
        guard bytes.first == 0x04 else { throw DeviceKeyFormatError(.notUncompressed) }
        guard let key = try? P256.Signing.PublicKey(x963Representation: bytes) else {
            throw DeviceKeyFormatError(.notOnCurve)
        }
        self.key = key
        self.x963Representation = Data(bytes)
        self.keyID = Data(SHA256.hash(data: bytes))
    }

    /// Wraps a swift-crypto public key.
    public init(_ key: P256.Signing.PublicKey) {
        self.key = key
        self.x963Representation = key.x963Representation
        self.keyID = Data(SHA256.hash(data: key.x963Representation))
    }

    /// Whether `derSignature` is a valid ECDSA P-256 / SHA-256 signature of `message` by this key.
    ///
    /// A malformed signature is simply not valid; this never throws.
    public func isValidSignature(_ derSignature: Data, for message: Data) -> Bool {
        guard let signature = try? P256.Signing.ECDSASignature(derRepresentation: derSignature) else {
            return false
        }
        return key.isValidSignature(signature, for: message)
    }

    public static func == (lhs: DevicePublicKey, rhs: DevicePublicKey) -> Bool {
        lhs.x963Representation == rhs.x963Representation
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(x963Representation) }

    /// Encoded as the base64 of the X9.63 bytes.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        guard let bytes = Data(base64Encoded: try container.decode(String.self)) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "public key is not base64")
        }
        do {
            try self.init(x963Representation: bytes)
        } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: error.description)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(x963Representation.base64EncodedString())
    }
}

/// Why bytes are not a usable device public key.
public struct DeviceKeyFormatError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A stable reason code.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Backing: String {
            case wrongLength = "key_wrong_length"
            case notUncompressed = "key_not_uncompressed"
            case notOnCurve = "key_not_on_curve"
        }
        fileprivate let backing: Backing
        /// Not 65 bytes.
        public static let wrongLength = Code(backing: .wrongLength)
        /// Does not start with `0x04` (compressed or hybrid points are not accepted).
        public static let notUncompressed = Code(backing: .notUncompressed)
        /// Not a point on P-256.
        public static let notOnCurve = Code(backing: .notOnCurve)
        /// The stable string, e.g. `"key_wrong_length"`.
        public var description: String { backing.rawValue }
    }

    /// What is wrong.
    public let code: Code

    fileprivate init(_ backing: Code.Backing) { self.code = Code(backing: backing) }

    public var description: String {
        switch code.backing {
        case .wrongLength: "a P-256 public key in X9.63 form is 65 bytes"
        case .notUncompressed: "the public key must be an uncompressed point (first byte 0x04)"
        case .notOnCurve: "the public key is not a point on the P-256 curve"
        }
    }
}
