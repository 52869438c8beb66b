// expect: crosses into main actor-isolated code
// Xcode 16's SDK leaves ASAuthorizationControllerDelegate nonisolated: a main-actor class whose delegate methods are
// main-actor isolated (as they are by default in it) does not conform. Xcode 26's SDK, where the protocol is @MainActor,
// accepts the same code: an adapter must compile against both (BioAuthApple's methods are nonisolated).
import AuthenticationServices
import Foundation

@MainActor
final class Session: NSObject, ASAuthorizationControllerDelegate {
    var finished = false
    func authorizationController(controller: ASAuthorizationController, didCompleteWithAuthorization authorization: ASAuthorization) {
        finished = true
    }
}
