// expect: risks causing data races
// LAContext is not Sendable: handing it to a task and using it here races. Only the SIL passes (-emit-sil) find
// this; -typecheck accepts it.
import LocalAuthentication

func race() async {
    let context = LAContext()
    Task { context.invalidate() }
    context.localizedReason = "Pay ¥88.00 to Coffee Shop"
}
