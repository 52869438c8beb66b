import BioAuthCore
import Foundation

/// This device's biometric sign-in key, bound to one account.
public struct DeviceBinding: Codable, Hashable, Sendable {
    /// The account the key was registered for.
    public var accountID: String
    /// The ``DeviceKeyStore`` tag of the key.
    public var keyTag: String
    /// The key's public half (its `DevicePublicKey.keyID` is what the server knows it by).
    public var publicKey: DevicePublicKey
    /// The sensor the key was enabled with.
    public var biometry: BiometryKind
    /// When biometric sign-in was turned on.
    public var enabledAt: Date
    /// The device's id on the server, once registered.
    public var deviceID: String?

    /// A binding of the key under `keyTag` to `accountID`.
    public init(
        accountID: String,
        keyTag: String,
        publicKey: DevicePublicKey,
        biometry: BiometryKind,
        enabledAt: Date,
        deviceID: String? = nil
    ) {
        self.accountID = accountID
        self.keyTag = keyTag
        self.publicKey = publicKey
        self.biometry = biometry
        self.enabledAt = enabledAt
        self.deviceID = deviceID
    }
}

/// Whether biometric sign-in is on, and if not, why.
public enum BiometricSignInStatus: Codable, Hashable, Sendable {
    /// Never offered on this device (`startAutoLoginState` never set).
    case notOffered
    /// On: the device is bound with this key.
    case enabled(binding: DeviceBinding)
    /// The user chose "Not Now" (稍后). Offered again after the next password sign-in.
    case declined
    /// It was on and was turned off; the key is deleted.
    case turnedOff(reason: BiometricSignInOffReason)

    /// The binding when on.
    public var binding: DeviceBinding? {
        if case .enabled(let binding) = self { return binding }
        return nil
    }
}

/// Why biometric sign-in was turned off. The app shows it once, with a way to turn it on again.
public enum BiometricSignInOffReason: String, Codable, Hashable, Sendable {
    /// The user turned it off.
    case userDisabled
    /// A finger or face was added or removed, so the key was invalidated (`.biometryCurrentSet`).
    case enrollmentChanged
    /// The key is gone from this device (restored from a backup, Keychain reset).
    case keyMissing
    /// The device was revoked on the server.
    case deviceRevoked
    /// Another account signed in with its password on this device.
    case accountChanged
    /// The server now requires the secure environment check (App Attest), and this key was registered without it.
    /// Turning biometric sign-in on again registers a new key with an attestation.
    case secureEnvironmentRequired

    /// Why, in `language`, naming the sensor: shown once, with a way to turn it on again (when `signedIn`, the way
    /// is this app's settings, not the password).
    public func message(in language: Language, biometry: BiometryKind, signedIn: Bool = false) -> String {
        Localizer.string("off.\(rawValue)", language: language, biometry: biometry, signedIn: signedIn)
    }
}
