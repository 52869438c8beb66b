import BioAuthClient
import BioAuthCore
import Crypto
import Foundation
import SwiftASN1
import X509

/// App Attest in software, for tests and simulators: makes real attestation and assertion objects, in Apple's
/// format, whose credential certificates are signed by a test CA instead of Apple's. A test deployment trusts
/// ``TestCA/certificate`` (`AppAttestPolicy.trustedRoots`), so the whole secure environment check runs end to
/// end on Linux. Never trust the test CA in production.
public actor SimulatedAppAttestProvider: AppAttestProvider {
    /// A certificate authority that stands in for Apple's App Attestation CA.
    public struct TestCA: Sendable {
        /// The root certificate a test deployment trusts.
        public let certificate: Certificate
        let key: P256.Signing.PrivateKey
        let name: DistinguishedName

        /// A fresh CA, valid from 2000 to 2099 so that tests on a manual clock can use it.
        public init() throws {
            key = P256.Signing.PrivateKey()
            name = try DistinguishedName { CommonName("BioAuth Test App Attestation Root CA") }
            certificate = try Certificate(
                version: .v3,
                serialNumber: Certificate.SerialNumber(),
                publicKey: .init(key.publicKey),
                notValidBefore: Date(timeIntervalSince1970: 946_684_800),
                notValidAfter: Date(timeIntervalSince1970: 4_102_444_799),
                issuer: name,
                subject: name,
                signatureAlgorithm: .ecdsaWithSHA256,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                    Critical(KeyUsage(keyCertSign: true))
                },
                issuerPrivateKey: .init(key)
            )
        }
    }

    /// How this simulated device misbehaves, for tests of the server's checks.
    public enum Tamper: Sendable {
        /// Everything as Apple would do it.
        case none
        /// Assertions reuse the last counter (a replay or a cloned key).
        case repeatCounter
        /// The attestation's nonce ignores the client data hash.
        case wrongNonce
        /// `generateKey` hands out the first key again (one App Attest key bound to two devices).
        case reuseFirstKey
        /// The attestation's authenticator data has its AT flag cleared (it says no credential data follows),
        /// signed and certified as it is, so that only that check can refuse it.
        case noAttestedCredentialFlag
    }

    private let ca: TestCA
    private let appID: String
    private let environment: String
    private let clock: any WallClock
    private var keys: [Data: (key: P256.Signing.PrivateKey, counter: UInt32)] = [:]
    private var firstKeyID: Data?
    /// Whether this "device" supports App Attest.
    public let isSupported: Bool
    /// How it misbehaves; `.none` by default (change it with ``setTamper(_:)``).
    public private(set) var tamper: Tamper = .none

    /// A device of the app `appID` (`TEAMID.bundle.id`) in `environment` (`"production"` or `"development"`);
    /// its credential certificates are valid for three days from `clock`'s now (give the server's clock).
    public init(ca: TestCA, appID: String, environment: String = "production", isSupported: Bool = true, clock: any WallClock = SystemClock()) {
        self.ca = ca
        self.appID = appID
        self.environment = environment
        self.isSupported = isSupported
        self.clock = clock
    }

    /// Makes the device misbehave from now on.
    public func setTamper(_ tamper: Tamper) { self.tamper = tamper }

    /// A new key in the simulated Enclave; its id (32 bytes).
    public func generateKey() async throws -> Data {
        guard isSupported else {
            throw AppAttestProviderError(code: AppAttestProviderError.unsupported, reason: "this device does not support App Attest")
        }
        if tamper == .reuseFirstKey, let firstKeyID { return firstKeyID }
        let key = P256.Signing.PrivateKey()
        let keyID = Data(SHA256.hash(data: key.publicKey.x963Representation))
        keys[keyID] = (key, 0)
        if firstKeyID == nil { firstKeyID = keyID }
        return keyID
    }

    /// An attestation of `keyID` over `clientDataHash`, signed by the test certificate authority.
    public func attestKey(_ keyID: Data, clientDataHash: Data) async throws -> Data {
        guard let entry = keys[keyID] else { throw AppAttestProviderError(code: AppAttestProviderError.invalidKey, reason: "unknown key") }
        let aaguid = environment == "development" ? Data("appattestdevelop".utf8) : Data("appattest".utf8) + Data(count: 7)
        let point = entry.key.publicKey.x963Representation
        let coseKey = CBOREncoder.encode(
            .map([
                .init(.unsigned(1), .unsigned(2)), .init(.unsigned(3), .negative(6)), .init(.negative(0), .unsigned(1)),
                .init(.negative(1), .bytes(point[1..<33])), .init(.negative(2), .bytes(point[33..<65])),
            ])
        )
        var authData = rpIDHash + Data([tamper == .noAttestedCredentialFlag ? 0x00 : 0x40]) + Data(count: 4) + aaguid
        authData += Data([UInt8(keyID.count >> 8), UInt8(keyID.count & 0xFF)]) + keyID + coseKey
        let nonce = Data(SHA256.hash(data: authData + (tamper == .wrongNonce ? Data(count: 32) : clientDataHash)))
        let now = clock.now
        let leaf = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: .init(entry.key.publicKey),
            notValidBefore: now.addingTimeInterval(-60),
            notValidAfter: now.addingTimeInterval(3 * 86400),
            issuer: ca.name,
            subject: try DistinguishedName { CommonName(keyID.map { String(format: "%02x", $0) }.joined()) },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Certificate.Extension(
                    oid: [1, 2, 840, 113635, 100, 8, 2],
                    critical: false,
                    value: ArraySlice([0x30, 0x24, 0xA1, 0x22, 0x04, 0x20] + [UInt8](nonce))
                )
            },
            issuerPrivateKey: .init(ca.key)
        )
        var serializer = DER.Serializer()
        try serializer.serialize(leaf)
        return CBOREncoder.encode(
            .map([
                .init(.text("fmt"), .text("apple-appattest")),
                .init(
                    .text("attStmt"),
                    .map([
                        .init(.text("x5c"), .array([.bytes(Data(serializer.serializedBytes))])),
                        .init(.text("receipt"), .bytes(Data("simulated receipt".utf8))),
                    ])
                ),
                .init(.text("authData"), .bytes(authData)),
            ])
        )
    }

    /// An assertion by `keyID` over `clientDataHash`, with the next counter.
    public func generateAssertion(_ keyID: Data, clientDataHash: Data) async throws -> Data {
        guard var entry = keys[keyID] else { throw AppAttestProviderError(code: AppAttestProviderError.invalidKey, reason: "unknown key") }
        if tamper != .repeatCounter || entry.counter == 0 { entry.counter += 1 }
        keys[keyID] = entry
        let counter = entry.counter
        let authData =
            rpIDHash + Data([0x00]) + Data([UInt8(counter >> 24), UInt8(counter >> 16 & 0xFF), UInt8(counter >> 8 & 0xFF), UInt8(counter & 0xFF)])
        let nonce = Data(SHA256.hash(data: authData + clientDataHash))
        let signature = try entry.key.signature(for: nonce).derRepresentation
        return CBOREncoder.encode(.map([.init(.text("signature"), .bytes(signature)), .init(.text("authenticatorData"), .bytes(authData))]))
    }

    private var rpIDHash: Data { Data(SHA256.hash(data: Data(appID.utf8))) }
}
