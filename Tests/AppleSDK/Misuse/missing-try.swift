// expect: call can throw, but it is not marked with 'try'
// A failed evaluation throws an LAError.
import LocalAuthentication

func unlock(_ context: LAContext) async -> Bool {
    await context.evaluatePolicy(.deviceOwnerAuthentication, localizedReason: "Unlock")
}
