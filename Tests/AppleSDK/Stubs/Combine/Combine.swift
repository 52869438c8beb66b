// Combine as the iOS 18 SDK declares it to Swift, for the parts SwiftUI apps use through SwiftUI: ObservableObject and
// @Published (developer.apple.com/documentation/combine). Declarations only: nothing here publishes.
import Foundation

/// A type of object with a publisher that emits before the object has changed.
public protocol ObservableObject: AnyObject {}

/// A type that publishes a property marked with an attribute.
@propertyWrapper
public struct Published<Value> {
    private var value: Value
    public init(wrappedValue: Value) { value = wrappedValue }
    public var wrappedValue: Value {
        get { value }
        set { value = newValue }
    }
}
