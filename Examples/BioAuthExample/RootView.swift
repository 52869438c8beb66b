#if canImport(SwiftUI) && canImport(UIKit)
import BioAuthApple
import BioAuthClient
import BioAuthCore
import SwiftUI

/// One screen per session state.
struct RootView: View {
    @ObservedObject var model: ExampleModel
    @State private var username = ""
    @State private var password = ""
    @State private var offer: BiometricSignInOffer?
    @State private var paid: String?

    var body: some View {
        NavigationView {
            Group {
                if let flows = model.flows, let snapshot = model.snapshot {
                    screen(flows, snapshot).bioAuthLifecycle(flows.appLock)
                } else {
                    ProgressView()
                }
            }
            .navigationTitle("BioAuth")
        }
        .overlay(alignment: .bottom) {
            if let message = model.message { Text(message).padding().foregroundColor(.red) }
        }
    }

    @ViewBuilder
    private func screen(_ flows: BioAuthFlows, _ snapshot: SessionSnapshot) -> some View {
        switch snapshot.state {
        case .signedOut:
            Form {
                TextField("Username", text: $username).textInputAutocapitalization(.never)
                SecureField("Password", text: $password)
                Button("Sign in") {
                    let (user, secret) = (username, password)
                    model.perform { flows in _ = try await flows.signIn(username: user, password: secret) }
                }
                Button("Create account") {
                    let (user, secret) = (username, password)
                    model.perform { flows in _ = try await flows.createAccount(username: user, password: secret) }
                }
                BiometricSignInButton(flows: flows, language: model.language) { Task { await model.refresh() } }
                // No username: the system offers the passkeys it holds for the bank's domain.
                Button("Sign in with a passkey") { model.perform { _ = try await $0.signInWithPasskey() } }
            }
        case .offeringBiometricSignIn:
            let copy = PromptCopy(language: model.language).offer(biometry: snapshot.biometricSignIn.binding?.biometry ?? .faceID)
            VStack(spacing: 16) {
                Text(copy.title).font(.title2)
                Text(copy.message)
                Button(copy.enableButton) { model.perform { try await $0.enableBiometricSignIn() } }
                Button(copy.laterButton) { model.perform { try await $0.declineBiometricSignIn() } }
            }
            .padding()
        case .locked:
            BioAuthLockScreen(flows: flows, language: model.language) { _ in Task { await model.refresh() } }
        case .unlocked:
            Form {
                BiometricSignInToggle(flows: flows, authenticator: model.authenticator, language: model.language)
                Button("Pay ¥88.00 to Coffee Shop") {
                    let api = model.api
                    model.perform { flows in
                        // The bank's backend would create the payment; the example asks the server directly.
                        let payment = try await api.createPayment(
                            amount: Money(minorUnits: 8800, currency: .cny),
                            payeeID: "coffee-1",
                            payeeName: "Coffee Shop",
                            idempotencyKey: UUID().uuidString,
                            accessToken: try await flows.accessToken()
                        )
                        _ = try await flows.pay(payment.id)
                    }
                }
                Button("Create a passkey") { model.perform { _ = try await $0.createPasskey(name: "BioAuth example") } }
                Button("Sign out") { model.perform { try await $0.signOut() } }
            }
        }
    }
}
#endif
