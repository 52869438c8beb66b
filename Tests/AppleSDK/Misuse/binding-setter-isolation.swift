// expect: call to main actor-isolated instance method 'flip' in a synchronous nonisolated context
// Binding(get:set:)'s closures are @Sendable: the setter can't call the view's main-actor method directly (the defect
// BioAuthViews had; it now hops with `Task { @MainActor in … }`).
import SwiftUI

struct FaceIDToggle: View {
    @State private var on = false

    var body: some View {
        let current = on
        return Toggle("Face ID", isOn: Binding(get: { current }, set: { value in flip(value) }))
    }

    func flip(_ value: Bool) { on = value }
}
