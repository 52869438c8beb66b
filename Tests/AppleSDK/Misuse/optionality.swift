// expect: must be unwrapped
// The enrollment state is nil when nothing is enrolled.
import Foundation
import LocalAuthentication

func enrollment(_ context: LAContext) -> Data {
    context.domainState.biometry.stateHash
}
