import BioAuthClient
import BioAuthCore
import Crypto
import Foundation

/// A passkey authenticator in software, for tests and simulators: it makes real WebAuthn registrations (`none`
/// attestation, or packed self attestation) and assertions with P-256 keys, as a browser or iOS would send them, so
/// the server's relying party is exercised end to end on Linux.
///
/// By default it behaves like a synced platform passkey (iCloud Keychain): backup eligible and backed up, user
/// verified, a signature counter that stays 0, client data whose origin is `https://` + the relying party id (what
/// iOS reports for an app with associated domains). ``Behaviour`` changes any of that for tests of the server's
/// checks.
public actor SimulatedPasskeyProvider: PasskeyProvider {
    /// How this authenticator behaves.
    public struct Behaviour: Sendable {
        /// The origin written into client data; `nil` uses `https://` + the relying party id.
        public var origin: String?
        /// The UV flag.
        public var userVerified = true
        /// The BE and BS flags: a synced passkey.
        public var synced = true
        /// Whether the signature counter counts (a security key) or stays 0 (a synced passkey).
        public var countsSignatures = false
        /// Packed self attestation instead of `none`.
        public var selfAttestation = false
        /// Every assertion carries this counter, as a copy of a counting authenticator would.
        public var fixedCounter: UInt32?

        public init(
            origin: String? = nil,
            userVerified: Bool = true,
            synced: Bool = true,
            countsSignatures: Bool = false,
            selfAttestation: Bool = false,
            fixedCounter: UInt32? = nil
        ) {
            self.origin = origin
            self.userVerified = userVerified
            self.synced = synced
            self.countsSignatures = countsSignatures
            self.selfAttestation = selfAttestation
            self.fixedCounter = fixedCounter
        }
    }

    /// A credential this authenticator holds.
    public struct Credential: Sendable {
        public let id: Data
        public let relyingPartyID: String
        public let userID: Data
        public let userName: String
        let key: P256.Signing.PrivateKey
        /// The signature counter of the last assertion.
        public internal(set) var counter: UInt32
    }

    /// The behaviour; change it between calls.
    public var behaviour: Behaviour
    /// The credentials held, oldest first.
    public private(set) var credentials: [Credential] = []

    public init(behaviour: Behaviour = Behaviour()) {
        self.behaviour = behaviour
    }

    /// Changes the behaviour.
    public func setBehaviour(_ behaviour: Behaviour) { self.behaviour = behaviour }

    public func register(_ request: PasskeyRegistrationRequest) async throws -> PasskeyRegistration {
        if credentials.contains(where: { request.excludedCredentialIDs.contains($0.id) }) {
            throw PasskeyProviderError(code: PasskeyProviderError.notAllowedCode, reason: "this authenticator holds an excluded credential")
        }
        let key = P256.Signing.PrivateKey()
        let credential = Credential(
            id: Data((0..<16).map { _ in UInt8.random(in: 0...255) }),
            relyingPartyID: request.relyingPartyID,
            userID: request.userID,
            userName: request.userName,
            key: key,
            counter: 0
        )
        credentials.append(credential)
        let clientDataJSON = Self.clientData(
            type: "webauthn.create",
            challenge: request.challenge,
            origin: behaviour.origin ?? "https://" + request.relyingPartyID
        )
        let point = key.publicKey.x963Representation
        let coseKey = CBOREncoder.encode(
            .map([
                .init(.unsigned(1), .unsigned(2)), .init(.unsigned(3), .negative(6)), .init(.negative(0), .unsigned(1)),
                .init(.negative(1), .bytes(point[1..<33])), .init(.negative(2), .bytes(point[33..<65])),
            ])
        )
        // aaguid (zero: withheld, as synced passkeys do) ‖ credential id length ‖ credential id ‖ COSE key.
        var attested = Data(repeating: 0, count: 16)
        attested.append(contentsOf: [UInt8(credential.id.count >> 8), UInt8(credential.id.count & 0xFF)])
        attested.append(credential.id)
        attested.append(coseKey)
        let authData = authenticatorData(relyingPartyID: request.relyingPartyID, counter: 0, attested: true) + attested
        var statement: [CBOR.Pair] = []
        var format = "none"
        if behaviour.selfAttestation {
            format = "packed"
            let signature = try key.signature(for: authData + Data(SHA256.hash(data: clientDataJSON))).derRepresentation
            statement = [.init(.text("alg"), .negative(6)), .init(.text("sig"), .bytes(signature))]
        }
        let object = CBOREncoder.encode(
            .map([
                .init(.text("fmt"), .text(format)), .init(.text("attStmt"), .map(statement)), .init(.text("authData"), .bytes(authData)),
            ])
        )
        return PasskeyRegistration(
            credentialID: credential.id,
            clientDataJSON: clientDataJSON,
            attestationObject: object,
            transports: ["hybrid", "internal"]
        )
    }

    public func assert(_ request: PasskeyAssertionRequest) async throws -> PasskeyAssertion {
        guard
            let index = credentials.lastIndex(where: {
                $0.relyingPartyID == request.relyingPartyID && (request.allowedCredentialIDs.isEmpty || request.allowedCredentialIDs.contains($0.id))
            })
        else {
            throw PasskeyProviderError(code: PasskeyProviderError.notAvailableCode, reason: "no passkey for \(request.relyingPartyID)")
        }
        if behaviour.countsSignatures { credentials[index].counter += 1 }
        if let fixed = behaviour.fixedCounter { credentials[index].counter = fixed }
        let credential = credentials[index]
        let clientDataJSON = Self.clientData(
            type: "webauthn.get",
            challenge: request.challenge,
            origin: behaviour.origin ?? "https://" + request.relyingPartyID
        )
        let authData = authenticatorData(relyingPartyID: request.relyingPartyID, counter: credential.counter, attested: false)
        let signature = try credential.key.signature(for: authData + Data(SHA256.hash(data: clientDataJSON))).derRepresentation
        return PasskeyAssertion(
            credentialID: credential.id,
            clientDataJSON: clientDataJSON,
            authenticatorData: authData,
            signature: signature,
            userHandle: credential.userID
        )
    }

    /// rpIdHash ‖ flags ‖ counter.
    private func authenticatorData(relyingPartyID: String, counter: UInt32, attested: Bool) -> Data {
        var flags: UInt8 = 0x01  // UP
        if behaviour.userVerified { flags |= 0x04 }
        if behaviour.synced { flags |= 0x08 | 0x10 }
        if attested { flags |= 0x40 }
        return Data(SHA256.hash(data: Data(relyingPartyID.utf8))) + Data([flags]) + withUnsafeBytes(of: counter.bigEndian) { Data($0) }
    }

    /// clientDataJSON as browsers write it: type, challenge, origin, crossOrigin, in that order.
    static func clientData(type: String, challenge: Data, origin: String) -> Data {
        let escapedOrigin = origin.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        return Data(#"{"type":"\#(type)","challenge":"\#(Base64URL.encode(challenge))","origin":"\#(escapedOrigin)","crossOrigin":false}"#.utf8)
    }
}
