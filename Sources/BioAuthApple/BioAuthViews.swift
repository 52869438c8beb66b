#if canImport(SwiftUI)
import BioAuthClient
import BioAuthCore
import SwiftUI

/// The lock screen: shown while the session is locked; "Unlock with Face ID" unlocks with the device key,
/// "Sign in with Password" ends the session. Texts and decisions come from the model's `BioAuthScreens`; a refusal
/// shows the model's message.
///
/// Not run on a device: type-checked on Linux against stand-ins for the SDK's declarations (docs/APPLE.md).
@available(iOS 17.0, macOS 14.0, *)
public struct BioAuthLockScreen: View {
    private let model: BioAuthModel

    /// A lock screen over `model`.
    public init(model: BioAuthModel) { self.model = model }

    public var body: some View {
        VStack(spacing: 16) {
            if let lock = model.lockScreen {
                Image(systemName: BiometrySymbol.name(lock.biometry)).font(.system(size: 48))
                Text(lock.title).font(.title2)
                Text(lock.message).multilineTextAlignment(.center)
                if let message = model.message { Text(message).foregroundColor(.red).multilineTextAlignment(.center) }
                Button(lock.unlockButton) { Task { await model.unlock() } }
                    .disabled(model.isBusy)
                Button(lock.passwordButton) { Task { await model.signOut() } }
                    .disabled(model.isBusy)
            }
        }
        .padding()
    }
}

/// "Sign in with Face ID / Touch ID": appears only when the app is signed out and this device is bound.
@available(iOS 17.0, macOS 14.0, *)
public struct BiometricSignInButton: View {
    private let model: BioAuthModel

    /// A button over `model`; after a sign-in the model's session is unlocked.
    public init(model: BioAuthModel) { self.model = model }

    public var body: some View {
        VStack {
            if let button = model.signInButton {
                Button(button.title) { Task { await model.signInWithBiometrics() } }
                    .disabled(model.isBusy)
                if let message = model.message { Text(message).font(.footnote).foregroundColor(.red) }
            }
        }
    }
}

/// The settings toggle for biometric sign-in, with the reason when it is off or can't be turned on.
@available(iOS 17.0, macOS 14.0, *)
public struct BiometricSignInToggle: View {
    private let model: BioAuthModel

    /// A toggle over `model`.
    public init(model: BioAuthModel) { self.model = model }

    public var body: some View {
        VStack(alignment: .leading) {
            if let toggle = model.biometricToggle {
                // Binding's closures are @Sendable and nonisolated in the SDK: the setter hops to the main actor
                // itself instead of calling a main-actor method from a nonisolated context.
                Toggle(
                    toggle.label,
                    isOn: Binding(get: { toggle.isOn }, set: { on in Task { @MainActor in await model.setBiometricSignIn(on) } })
                )
                .disabled(!toggle.isEnabled || model.isBusy)
                if let note = model.message ?? toggle.footnote { Text(note).font(.footnote).foregroundColor(.secondary) }
            }
        }
    }
}

/// The SF Symbol of a sensor.
enum BiometrySymbol {
    static func name(_ kind: BiometryKind) -> String {
        switch kind {
        case .touchID: "touchid"
        case .opticID: "opticid"
        default: "faceid"
        }
    }
}
#endif
