#if canImport(SwiftUI) && canImport(UIKit)
import BioAuthApple
import BioAuthClient
import BioAuthCore
import SwiftUI

/// One screen per session state, all drawn from the model.
struct RootView: View {
    let model: BioAuthModel
    let api: BioAuthAPI
    @State private var username = ""
    @State private var password = ""

    var body: some View {
        NavigationStack {
            Group {
                if let snapshot = model.snapshot {
                    screen(snapshot)
                } else if let message = model.message {
                    Text(message).foregroundColor(.red).padding()  // the flows could not be made (the Keychain refused, say)
                } else {
                    ProgressView()
                }
            }
            .navigationTitle("BioAuth")
        }
        .overlay(alignment: .bottom) {
            if let message = model.message, model.snapshot?.state != .locked { Text(message).padding().foregroundColor(.red) }
        }
    }

    @ViewBuilder
    private func screen(_ snapshot: SessionSnapshot) -> some View {
        switch snapshot.state {
        case .signedOut:
            Form {
                TextField("Username", text: $username).textInputAutocapitalization(.never)
                SecureField("Password", text: $password)
                Button("Sign in") { Task { await model.signIn(username: username, password: password) } }
                Button("Create account") { Task { await model.createAccount(username: username, password: password) } }
                BiometricSignInButton(model: model)
                // No username: the system offers the passkeys it holds for the bank's domain.
                Button("Sign in with a passkey") { Task { await model.signInWithPasskey() } }
            }
            .disabled(model.isBusy)
        case .offeringBiometricSignIn:
            if let offer = model.offer {
                VStack(spacing: 16) {
                    Text(offer.title).font(.title2)
                    Text(offer.message)
                    Button(offer.enableButton) { Task { await model.enableBiometricSignIn() } }
                    Button(offer.laterButton) { Task { await model.declineBiometricSignIn() } }
                }
                .padding()
                .disabled(model.isBusy)
            }
        case .locked:
            BioAuthLockScreen(model: model)
        case .unlocked:
            Form {
                BiometricSignInToggle(model: model)
                Button("Pay ¥88.00 to Coffee Shop") { Task { await payForCoffee() } }
                Button("Create a passkey") { Task { await model.createPasskey(name: "BioAuth example") } }
                Button("Sign out") { Task { await model.signOut() } }
            }
            .disabled(model.isBusy)
        }
    }

    /// The bank's backend would create the payment; the example asks the server directly, then pays it with Face ID.
    private func payForCoffee() async {
        let api = api
        await model.perform { flows in
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
}
#endif
