internal import AppleDeviceSimulation
// CryptoKit as the iOS 18 SDK declares it to Swift, for the parts BioAuth uses: swift-crypto (whose API is CryptoKit's)
// re-exported, and SecureEnclave.P256.Signing.PrivateKey over a simulated Enclave (AppleDeviceSimulation). Declarations
// from developer.apple.com/documentation/cryptokit/secureenclave: isAvailable,
// P256.Signing.PrivateKey.init(compactRepresentable:accessControl:authenticationContext:),
// init(dataRepresentation:authenticationContext:), dataRepresentation, publicKey, signature(for:).
@_exported import Crypto
import Foundation
import LocalAuthentication
@_spi(Simulation) import Security

/// The device's Secure Enclave.
@available(iOS 13.0, macOS 10.15, *)
public enum SecureEnclave {
    /// Whether the device has a Secure Enclave (the Simulator has none).
    public static var isAvailable: Bool { SimulatedDevice.current.hasSecureEnclave }

    public enum P256 {
        public enum Signing {
            /// A P-256 signing key inside the Enclave; only its encrypted `dataRepresentation` leaves it.
            public struct PrivateKey {
                /// The key's blob, usable only by this device's Enclave.
                public let dataRepresentation: Data
                /// The public key.
                public let publicKey: Crypto.P256.Signing.PublicKey
                private let key: Crypto.P256.Signing.PrivateKey
                private let flags: SecAccessControlCreateFlags
                private let enrollment: Data?
                private let context: LAContext?

                /// Makes a key in the Enclave protected by `accessControl`.
                public init(
                    compactRepresentable: Bool = true,
                    accessControl: SecAccessControl = SecAccessControlCreateWithFlags(
                        nil,
                        kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
                        [],
                        nil
                    )!,
                    authenticationContext: LAContext? = nil
                ) throws {
                    let device = SimulatedDevice.current
                    guard device.hasSecureEnclave else { throw CryptoKitError.underlyingCoreCryptoError(error: -4) }
                    // `.biometryCurrentSet` needs enrolled biometry and a passcode, as the system's access control does.
                    if accessControl.flags.contains(.biometryCurrentSet), device.enrollmentHash == nil || !device.passcodeSet {
                        throw CryptoKitError.underlyingCoreCryptoError(error: -25293)
                    }
                    key = Crypto.P256.Signing.PrivateKey(compactRepresentable: compactRepresentable)
                    flags = accessControl.flags
                    enrollment = accessControl.flags.contains(.biometryCurrentSet) ? device.enrollmentHash : nil
                    context = authenticationContext
                    publicKey = key.publicKey
                    dataRepresentation = Self.blob(key: key, flags: flags, enrollment: enrollment)
                }

                /// Opens a key from its blob; `authenticationContext` (an evaluated `LAContext`) authorizes its use
                /// without another prompt.
                public init(dataRepresentation: Data, authenticationContext: LAContext? = nil) throws {
                    let bytes = [UInt8](dataRepresentation)
                    guard bytes.count > 41, bytes.starts(with: Array("SEKEY".utf8)) else {
                        throw CryptoKitError.incorrectKeySize
                    }
                    let flags = SecAccessControlCreateFlags(rawValue: UInt(bytes[5..<9].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }))
                    let key = try Crypto.P256.Signing.PrivateKey(rawRepresentation: bytes[9..<41])
                    let enrollment = bytes.count > 41 ? Data(bytes[41...]) : nil
                    self.key = key
                    self.flags = flags
                    self.enrollment = enrollment
                    self.context = authenticationContext
                    self.publicKey = key.publicKey
                    self.dataRepresentation = dataRepresentation
                }

                /// Signs `data` (SHA-256, ECDSA). A `.biometryCurrentSet` key needs an evaluated context, and refuses
                /// once the enrollment has changed since it was made.
                public func signature<D: DataProtocol>(for data: D) throws -> Crypto.P256.Signing.ECDSASignature {
                    if flags.contains(.biometryCurrentSet) {
                        let device = SimulatedDevice.current
                        guard let context, device.isEvaluated(context) else {
                            throw NSError(domain: LAErrorDomain, code: LAError.Code.authenticationFailed.rawValue)
                        }
                        guard enrollment == device.enrollmentHash else {
                            throw NSError(domain: NSOSStatusErrorDomain, code: Int(errSecAuthFailed))
                        }
                    }
                    return try key.signature(for: data)
                }

                private static func blob(key: Crypto.P256.Signing.PrivateKey, flags: SecAccessControlCreateFlags, enrollment: Data?) -> Data {
                    let raw = UInt32(truncatingIfNeeded: flags.rawValue)
                    return Data("SEKEY".utf8) + Data([UInt8(raw >> 24), UInt8(raw >> 16 & 0xFF), UInt8(raw >> 8 & 0xFF), UInt8(raw & 0xFF)])
                        + key.rawRepresentation + (enrollment ?? Data())
                }
            }
        }
    }
}
