// expect: incorrect argument label
// canEvaluatePolicy's second argument is labelled `error:`.
import Foundation
import LocalAuthentication

func preflight() -> Bool {
    var error: NSError?
    return LAContext().canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, err: &error)
}
