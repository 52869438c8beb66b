#if canImport(SwiftUI)
import BioAuthClient
import BioAuthCore
import SwiftUI

/// The lock screen: shown while the session is locked; "Unlock with Face ID" unlocks with the device key,
/// "Sign in with Password" ends the session. Texts and decisions come from `BioAuthScreens`.
///
/// Not run on a device: type-checked on Linux against stand-ins for the SDK's declarations (docs/APPLE.md).
public struct BioAuthLockScreen: View {
    private let flows: BioAuthFlows
    private let screens: BioAuthScreens
    private let onChange: @MainActor (SessionSnapshot) -> Void
    @State private var snapshot: SessionSnapshot?
    @State private var message: String?
    @State private var busy = false

    /// A lock screen over `flows`; `onChange` receives the session after every action.
    public init(flows: BioAuthFlows, language: Language, onChange: @escaping @MainActor (SessionSnapshot) -> Void = { _ in }) {
        self.flows = flows
        self.screens = BioAuthScreens(language: language)
        self.onChange = onChange
    }

    public var body: some View {
        VStack(spacing: 16) {
            if let snapshot, let lock = screens.lockScreen(for: snapshot) {
                Image(systemName: lock.biometry == .touchID ? "touchid" : (lock.biometry == .opticID ? "opticid" : "faceid"))
                    .font(.system(size: 48))
                Text(lock.title).font(.title2)
                Text(lock.message).multilineTextAlignment(.center)
                if let message { Text(message).foregroundColor(.red).multilineTextAlignment(.center) }
                Button(lock.unlockButton) { run { _ = try await flows.unlock() } }
                    .disabled(busy)
                Button(lock.passwordButton) { run { try await flows.signOut() } }
                    .disabled(busy)
            }
        }
        .padding()
        .task { snapshot = await flows.snapshot }
    }

    private func run(_ action: @escaping @Sendable () async throws -> Void) {
        busy = true
        message = nil
        Task { @MainActor in
            do {
                try await action()
            } catch {
                message = screens.message(for: error, biometry: snapshot?.biometricSignIn.binding?.biometry ?? .none)
            }
            let now = await flows.snapshot
            snapshot = now
            busy = false
            onChange(now)
        }
    }
}

/// "Sign in with Face ID / Touch ID": appears only when the app is signed out and this device is bound.
public struct BiometricSignInButton: View {
    private let flows: BioAuthFlows
    private let screens: BioAuthScreens
    private let onSignedIn: @MainActor () -> Void
    @State private var snapshot: SessionSnapshot?
    @State private var message: String?

    /// A button over `flows`; `onSignedIn` runs after a successful sign-in.
    public init(flows: BioAuthFlows, language: Language, onSignedIn: @escaping @MainActor () -> Void) {
        self.flows = flows
        self.screens = BioAuthScreens(language: language)
        self.onSignedIn = onSignedIn
    }

    public var body: some View {
        VStack {
            if let snapshot, let button = screens.signInButton(for: snapshot) {
                Button(button.title) {
                    Task { @MainActor in
                        do {
                            try await flows.signInWithBiometrics()
                            onSignedIn()
                        } catch {
                            message = screens.message(for: error, biometry: button.biometry)
                        }
                        self.snapshot = await flows.snapshot
                    }
                }
                if let message { Text(message).font(.footnote).foregroundColor(.red) }
            }
        }
        .task { snapshot = await flows.snapshot }
    }
}

/// The settings toggle for biometric sign-in, with the reason when it is off or can't be turned on.
public struct BiometricSignInToggle: View {
    private let flows: BioAuthFlows
    private let authenticator: any BiometricAuthenticator
    private let screens: BioAuthScreens
    @State private var model: BioAuthScreens.BiometricToggle?
    @State private var message: String?

    /// A toggle over `flows`, asking `authenticator` whether biometrics can be turned on.
    public init(flows: BioAuthFlows, authenticator: any BiometricAuthenticator, language: Language) {
        self.flows = flows
        self.authenticator = authenticator
        self.screens = BioAuthScreens(language: language)
    }

    public var body: some View {
        VStack(alignment: .leading) {
            if let model {
                // Binding's closures are @Sendable and nonisolated in the SDK: the setter hops to the main actor
                // itself instead of calling a main-actor method from a nonisolated context.
                Toggle(model.label, isOn: Binding(get: { model.isOn }, set: { on in Task { @MainActor in await flip(to: on) } }))
                    .disabled(!model.isEnabled)
                if let note = message ?? model.footnote { Text(note).font(.footnote).foregroundColor(.secondary) }
            }
        }
        .task { await refresh() }
    }

    private func flip(to on: Bool) async {
        message = nil
        do {
            if on { try await flows.enableBiometricSignIn() } else { try await flows.disableBiometricSignIn() }
        } catch {
            let kind = await authenticator.availability(for: .biometrics).kind
            message = screens.message(for: error, biometry: kind)
        }
        await refresh()
    }

    private func refresh() async {
        let snapshot = await flows.snapshot
        let availability = await authenticator.availability(for: .biometrics)
        model = screens.biometricToggle(for: snapshot, availability: availability)
    }
}
#endif
