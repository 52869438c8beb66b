internal import AppleDeviceSimulation
// DeviceCheck as the iOS 18 SDK declares it to Swift, for the parts BioAuth uses, over a scripted App Attest service
// (AppleDeviceSimulation). Declarations from developer.apple.com/documentation/devicecheck: DCAppAttestService (shared,
// isSupported, generateKey, attestKey(_:clientDataHash:), generateAssertion(_:clientDataHash:), in the async forms
// Swift imports from their completion handlers), DCError.Code and DCErrorDomain.
import Foundation

/// The error domain of DeviceCheck's errors.
public let DCErrorDomain: String = "com.apple.devicecheck.error"

/// DeviceCheck's error codes.
public struct DCError: Error, Hashable, @unchecked Sendable {
    public enum Code: Int, @unchecked Sendable {
        case unknownSystemFailure = 0
        case featureUnsupported = 1
        case invalidInput = 2
        case invalidKey = 3
        case serverUnavailable = 4
    }
    public let code: Code
    public init(_ code: Code) { self.code = code }
}

/// The App Attest service.
@available(iOS 14.0, macOS 11.0, *)
open class DCAppAttestService: NSObject {
    private static let instance = DCAppAttestService()

    /// The shared service.
    open class var shared: DCAppAttestService { instance }

    /// Whether this device offers App Attest (false on the Simulator).
    open var isSupported: Bool { SimulatedDevice.current.appAttestSupported }

    /// Makes a key in the Secure Enclave; returns its id (base64 of SHA-256 of the public key).
    open func generateKey() async throws -> String {
        try check()
        return SimulatedDevice.current.appAttestGenerateKey()
    }

    /// Asks Apple to attest the key `keyId` over `clientDataHash`.
    open func attestKey(_ keyId: String, clientDataHash: Data) async throws -> Data {
        try check(keyId, clientDataHash, network: true)
        return Data("attestation".utf8) + clientDataHash
    }

    /// Makes an assertion with the key `keyId` over `clientDataHash`.
    open func generateAssertion(_ keyId: String, clientDataHash: Data) async throws -> Data {
        try check(keyId, clientDataHash)
        return Data("assertion".utf8) + clientDataHash
    }

    private func check(_ keyId: String? = nil, _ clientDataHash: Data? = nil, network: Bool = false) throws {
        let device = SimulatedDevice.current
        guard device.appAttestSupported else { throw NSError(domain: DCErrorDomain, code: DCError.Code.featureUnsupported.rawValue) }
        if let clientDataHash, clientDataHash.count < 16 { throw NSError(domain: DCErrorDomain, code: DCError.Code.invalidInput.rawValue) }
        if let keyId, !device.appAttestHasKey(keyId) { throw NSError(domain: DCErrorDomain, code: DCError.Code.invalidKey.rawValue) }
        if network, device.appAttestServerUnavailable {
            throw NSError(domain: DCErrorDomain, code: DCError.Code.serverUnavailable.rawValue)
        }
    }
}
