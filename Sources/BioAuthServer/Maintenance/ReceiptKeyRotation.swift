import BioAuthCore
import Crypto
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `bioauth admin receipt-key rotate`: a new receipt-signing key replaces the one in the key file, and the old one is
/// retired in the database, where it stays published at `GET /v1/receipt-keys` so every receipt it signed keeps verifying.
///
/// The steps are ordered so that a rotation cut short can be finished and never loses a key that signed: the new key is
/// written beside the file (`PATH.new`, owner-only, created exclusively), then the database records the rotation, then
/// the new file replaces the old one (a rename, atomic). A `PATH.new` left by an earlier rotation stops the next one with
/// a message saying how to finish it. Servers sign with the key they loaded at start-up: restart each one with the new file
/// (until then they sign with the old key, which stays published).
public enum ReceiptKeyRotation {
    /// What a rotation did: the ids (base64url) of the key retired and of the key now signing.
    public struct Outcome: Sendable {
        public let retiredKeyID: String
        public let newKeyID: String
    }

    /// Rotates the key in `keyPath` for the servers using `database`, at `clock`'s now.
    public static func rotate(keyPath: String, database: any DatabaseExecutor, clock: any WallClock = SystemClock()) async throws -> Outcome {
        let pending = keyPath + ".new"
        guard !FileManager.default.fileExists(atPath: pending) else {
            throw ConfigurationError(
                message: """
                    \(pending) is left from a rotation that did not finish: if GET /v1/receipt-keys lists its key, move it over \
                    \(keyPath) (mv \(pending) \(keyPath)); otherwise delete it; then rotate again if needed
                    """
            )
        }
        guard FileManager.default.fileExists(atPath: keyPath) else {
            throw ConfigurationError(message: "there is no receipt key file \(keyPath) to rotate")
        }
        let old = try ReceiptSigner.load(path: keyPath)
        let new = P256.Signing.PrivateKey()
        let newPublic = DevicePublicKey(new.publicKey)
        try SecretFile.create(path: pending, text: new.pemRepresentation, what: "new receipt key")
        let now = clock.now
        do {
            try await database.transaction { db in
                // The old key is published even if no server registered it yet (a database that never saw it).
                _ = try await ReceiptKeyRing.register(old.publicKey, at: now, on: db)
                try await ReceiptKeyRing.rotate(to: newPublic, at: now, on: db)
                try await ChangeRecorder.outsideTheServer(database: database, clock: clock, random: SystemRandomSource()).audit(
                    .receiptKeyRotated,
                    succeeded: true,
                    account: nil,
                    operator: .commandLine("\(Base64URL.encode(old.publicKey.keyID)) → \(Base64URL.encode(newPublic.keyID))"),
                    on: db
                )
            }
        } catch {
            unlink(pending)
            throw error
        }
        guard rename(pending, keyPath) == 0 else {
            throw ConfigurationError(message: "the rotation is recorded but \(pending) could not replace \(keyPath): move it there by hand")
        }
        return Outcome(retiredKeyID: Base64URL.encode(old.publicKey.keyID), newKeyID: Base64URL.encode(newPublic.keyID))
    }
}
