import BioAuthCore
import Crypto
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The server's own P-256 key that signs payment receipts. Kept in a PEM file (owner-only) so receipts stay
/// verifiable across restarts; its public half is published at `GET /v1/receipt-keys`.
struct ReceiptSigner: Sendable {
    private let privateKey: P256.Signing.PrivateKey
    /// The public half, as clients verify with it.
    let publicKey: DevicePublicKey

    /// Loads the key at `path`, or creates it there (mode 0600) when there is no file. An unreadable or
    /// malformed file is an error, never replaced. `":memory:"` makes a key for this process only.
    static func load(path: String) throws -> ReceiptSigner {
        if path == ":memory:" { return ReceiptSigner(P256.Signing.PrivateKey()) }
        if FileManager.default.fileExists(atPath: path) {
            guard let pem = try? String(contentsOfFile: path, encoding: .utf8),
                let key = try? P256.Signing.PrivateKey(pemRepresentation: pem)
            else { throw ConfigurationError(message: "the receipt key file \(path) is not a P-256 private key in PEM form") }
            return ReceiptSigner(key)
        }
        let key = P256.Signing.PrivateKey()
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard descriptor >= 0 else { throw ConfigurationError(message: "cannot create the receipt key file \(path)") }
        defer { close(descriptor) }
        let bytes = Array(key.pemRepresentation.utf8)
        guard write(descriptor, bytes, bytes.count) == bytes.count else {
            throw ConfigurationError(message: "cannot write the receipt key file \(path)")
        }
        return ReceiptSigner(key)
    }

    private init(_ key: P256.Signing.PrivateKey) {
        privateKey = key
        publicKey = DevicePublicKey(key.publicKey)
    }

    /// Signs `receipt` (its ``PaymentReceipt/signature`` is replaced).
    func sign(_ receipt: PaymentReceipt) throws -> PaymentReceipt {
        var receipt = receipt
        receipt.keyId = Base64URL.encode(publicKey.keyID)
        guard let bytes = receipt.signedBytes() else { throw APIError.internalError }
        receipt.signature = Base64URL.encode(try privateKey.signature(for: bytes).derRepresentation)
        return receipt
    }
}
