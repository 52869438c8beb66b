import BioAuthCore
import Crypto
import Foundation
import NIOConcurrencyHelpers

/// Device keys this server has parsed and challenges it has issued, remembered so that a signature can be
/// checked **before** its unit of work, and a stored key need not be parsed again on every request.
///
/// Every unit of work runs on the database's one thread (on SQLite); a P-256 verification and the parsing of the
/// device's key took about a fifth of that thread's time, and every other request waited behind them. With the key
/// and the challenge known in advance, the signature is checked on the request's own thread
/// (``BioAuthService/earlyCheck(_:keyID:challengeID:purpose:counter:transactionHash:)``), and the unit of work only
/// compares: **nothing remembered here is trusted.** The unit reads the key and the challenge from the database as
/// before and uses the early outcome only when the key, the challenge, and everything else the signature covers
/// are the same bytes; otherwise it verifies itself. A key or challenge missing here (another server issued it,
/// or it was forgotten) just means the check happens in the unit of work, as it always did.
///
/// At most `capacity` keys and `capacity` challenges are kept; when one map is full it is emptied and starts over
/// (a challenge is forgotten when it is used anyway, so the challenge map fills only with challenges never used).
final class SignatureInputs: Sendable {
    private struct State {
        var keys: [Data: DevicePublicKey] = [:]
        var challenges: [String: Data] = [:]
    }

    private let state = NIOLockedValueBox(State())
    /// The most keys, and the most challenges, kept.
    let capacity: Int

    init(capacity: Int = 8192) { self.capacity = max(1, capacity) }

    /// The device key stored as `x963Representation`, parsed once and then reused.
    func key(x963Representation bytes: Data) throws(DeviceKeyFormatError) -> DevicePublicKey {
        let keyID = Data(SHA256.hash(data: bytes))
        if let known = state.withLockedValue({ $0.keys[keyID] }), known.x963Representation == bytes { return known }
        let key = try DevicePublicKey(x963Representation: bytes)
        remember(key)
        return key
    }

    /// The parsed key whose id is `keyID`, if this server has parsed it.
    func key(id keyID: Data) -> DevicePublicKey? { state.withLockedValue { $0.keys[keyID] } }

    /// Remembers `key` under its own key id; `id` puts it under another (tests: a corrupted entry must not matter).
    func remember(_ key: DevicePublicKey, id: Data? = nil) {
        let keyID = id ?? key.keyID
        state.withLockedValue { state in
            if state.keys.count >= capacity && state.keys[keyID] == nil { state.keys.removeAll(keepingCapacity: true) }
            state.keys[keyID] = key
        }
    }

    /// The bytes of the challenge `id`, if this server issued it and it has not been used.
    func challenge(_ id: String) -> Data? { state.withLockedValue { $0.challenges[id] } }

    func remember(challenge bytes: Data, id: String) {
        state.withLockedValue { state in
            if state.challenges.count >= capacity && state.challenges[id] == nil { state.challenges.removeAll(keepingCapacity: true) }
            state.challenges[id] = bytes
        }
    }

    func forget(challenge id: String) { _ = state.withLockedValue { $0.challenges.removeValue(forKey: id) } }

    /// How many keys and challenges are remembered (tests).
    var counts: (keys: Int, challenges: Int) { state.withLockedValue { ($0.keys.count, $0.challenges.count) } }
}

/// The outcome of checking a signature before its unit of work, with every input it was checked against.
///
/// ``BioAuthService/checkSignature(_:by:purpose:challenge:counter:transactionHash:early:)`` uses ``valid`` only
/// when each of these equals what the unit of work read from the database and was sent.
struct EarlySignatureCheck: Sendable {
    let publicKey: Data
    let purpose: SignedPayload.Purpose
    let challenge: Data
    let counter: UInt64
    let transactionHash: Data
    let signature: Data
    /// Whether the signature verified over the payload these inputs make.
    let valid: Bool

    /// Whether this check was made over exactly these inputs.
    func covers(
        signature: Data,
        by key: DevicePublicKey,
        purpose: SignedPayload.Purpose,
        challenge: Data,
        counter: UInt64,
        transactionHash: Data
    ) -> Bool {
        self.purpose == purpose && self.counter == counter && self.signature == signature && self.challenge == challenge
            && self.transactionHash == transactionHash && publicKey == key.x963Representation
    }
}
