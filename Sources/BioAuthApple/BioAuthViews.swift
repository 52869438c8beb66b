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

/// The sheet that asks the customer to approve a request that started elsewhere: who asks and what, where from, and for
/// a sign-in the three numbers (tapping the one the other screen shows approves with Face ID); "It wasn't me" denies.
/// Texts come from the model's `BioAuthScreens`; a refusal shows the model's message.
///
/// Not run on a device: type-checked on Linux against stand-ins for the SDK's declarations (docs/APPLE.md).
@available(iOS 17.0, macOS 14.0, *)
public struct BioAuthApprovalSheet: View {
    private let model: BioAuthModel
    private let approval: ApprovalDetails
    private let done: @MainActor () -> Void

    /// A sheet for `approval` over `model`; `done` runs once it is answered (to dismiss the sheet).
    public init(model: BioAuthModel, approval: ApprovalDetails, done: @escaping @MainActor () -> Void) {
        self.model = model
        self.approval = approval
        self.done = done
    }

    public var body: some View {
        let sheet = model.approvalSheet(for: approval)
        return VStack(spacing: 16) {
            Text(sheet.title).font(.title3).multilineTextAlignment(.center)
            if let origin = sheet.origin { Text(origin).font(.footnote).foregroundColor(.secondary) }
            if let prompt = sheet.numberPrompt { Text(prompt) }
            HStack(spacing: 12) {
                ForEach(sheet.numberChoices, id: \.self) { number in
                    Button(String(number)) { answer { await model.approve(approval, number: number) != nil } }
                        .font(.title)
                        .disabled(model.isBusy)
                }
            }
            if let approve = sheet.approveButton {
                Button(approve) { answer { await model.approve(approval) != nil } }
                    .disabled(model.isBusy)
            }
            Button(sheet.denyButton) { answer { await model.deny(approval) } }
                .disabled(model.isBusy)
            if let message = model.message { Text(message).foregroundColor(.red).multilineTextAlignment(.center) }
        }
        .padding()
    }

    /// Runs `action`; the sheet is done when it succeeded.
    private func answer(_ action: @escaping @MainActor () async -> Bool) {
        Task { @MainActor in
            if await action() { done() }
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
