import BioAuthCore
import Crypto
import Foundation
import Logging

/// The server's own P-256 key that signs payment receipts. Kept in a PEM file (owner-only) so receipts stay
/// verifiable across restarts; its public half is recorded in the database at start-up and published at
/// `GET /v1/receipt-keys` with the keys earlier rotations retired (``ReceiptKeyRotation``).
struct ReceiptSigner: Sendable {
    private let privateKey: P256.Signing.PrivateKey
    /// The public half, as clients verify with it.
    let publicKey: DevicePublicKey

    /// Loads the key at `path`, or creates it there (mode 0600, said on `logger`) when there is no file. An unreadable or
    /// malformed file is an error, never replaced. `":memory:"` makes a key for this process only.
    static func load(path: String, logger: Logger? = nil) throws -> ReceiptSigner {
        if path == ":memory:" { return ReceiptSigner(P256.Signing.PrivateKey()) }
        let key = try SecretFile.loadOrCreate(
            path: path,
            what: "receipt key (a P-256 private key in PEM form)",
            logger: logger,
            parse: { try? P256.Signing.PrivateKey(pemRepresentation: $0) },
            make: {
                let key = P256.Signing.PrivateKey()
                return (key, key.pemRepresentation)
            }
        )
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

    /// Signs `approval` (its ``SignedApproval/signature`` is replaced).
    func sign(_ approval: SignedApproval) throws -> SignedApproval {
        var approval = approval
        approval.keyId = Base64URL.encode(publicKey.keyID)
        guard let bytes = approval.signedBytes() else { throw APIError.internalError }
        approval.signature = Base64URL.encode(try privateKey.signature(for: bytes).derRepresentation)
        return approval
    }
}
