// expect: is 'async' but is not marked with 'await'
// evaluatePolicy(_:localizedReason:) is imported as an async function.
import LocalAuthentication

func unlock(_ context: LAContext) async throws -> Bool {
    try context.evaluatePolicy(.deviceOwnerAuthentication, localizedReason: "Unlock")
}
