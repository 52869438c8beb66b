// SwiftUI as the iOS 18 SDK declares it to Swift, for the parts BioAuthApple and the example app use: declarations for
// type-checking, with nothing drawn. From developer.apple.com/documentation/swiftui: View and ViewModifier (main-actor
// protocols), ViewBuilder, App, Scene, WindowGroup, the views (Text, Button, Image, VStack, Form, NavigationView, NavigationStack, Group,
// ProgressView, Toggle, TextField, SecureField), State, Binding (its get/set closures @Sendable, as in the iOS 18 SDK),
// Environment and ScenePhase, StateObject and ObservedObject, and the modifiers used (font, foregroundColor,
// multilineTextAlignment, padding, disabled, task — its action `sending @isolated(any)` —, onAppear, onChange(of:perform:),
// overlay(alignment:content:), navigationTitle, textInputAutocapitalization, modifier). SwiftUI re-exports Combine,
// Foundation and (on iOS) UIKit, as the SDK module does.
@_exported import Combine
@_exported import Foundation
@_exported import UIKit  // SwiftUI on iOS re-exports UIKit

// MARK: views and builders

/// A type that represents part of your app's user interface.
@MainActor @preconcurrency
public protocol View {
    associatedtype Body: View
    @ViewBuilder @MainActor @preconcurrency var body: Body { get }
}

extension Never: View {
    public typealias Body = Never
    public var body: Never { fatalError("no body") }
}

/// A view that draws nothing.
public struct EmptyView: View {
    nonisolated public init() {}
    public var body: Never { fatalError("no body") }
}

/// A view made of several.
public struct TupleView<T>: View {
    nonisolated public init(_ value: T) {}
    public var body: Never { fatalError("no body") }
}

/// One of two views.
public struct _ConditionalContent<TrueContent: View, FalseContent: View>: View {
    nonisolated init() {}
    public var body: Never { fatalError("no body") }
}

extension Optional: View where Wrapped: View {
    public var body: Never { fatalError("no body") }
}

/// Builds views from closures.
@resultBuilder
public struct ViewBuilder {
    public static func buildBlock() -> EmptyView { EmptyView() }
    public static func buildBlock<Content: View>(_ content: Content) -> Content { content }
    public static func buildBlock<each Content: View>(_ content: repeat each Content) -> TupleView<(repeat each Content)> {
        TupleView((repeat each content))
    }
    public static func buildExpression<Content: View>(_ content: Content) -> Content { content }
    public static func buildIf<Content: View>(_ content: Content?) -> Content? { content }
    public static func buildEither<TrueContent: View, FalseContent: View>(first: TrueContent) -> _ConditionalContent<TrueContent, FalseContent> {
        _ConditionalContent()
    }
    public static func buildEither<TrueContent: View, FalseContent: View>(second: FalseContent) -> _ConditionalContent<TrueContent, FalseContent> {
        _ConditionalContent()
    }
}

/// A modifier applied to a view.
@MainActor @preconcurrency
public protocol ViewModifier {
    associatedtype Body: View
    typealias Content = _ViewModifier_Content<Self>
    @ViewBuilder @MainActor @preconcurrency func body(content: Content) -> Body
}

/// The view a modifier is applied to.
public struct _ViewModifier_Content<Modifier: ViewModifier>: View {
    public var body: Never { fatalError("no body") }
}

/// A view with a modifier applied.
public struct ModifiedContent<Content, Modifier> {
    public var content: Content
    public var modifier: Modifier
    nonisolated public init(content: Content, modifier: Modifier) {
        self.content = content
        self.modifier = modifier
    }
}

extension ModifiedContent: View where Content: View, Modifier: ViewModifier {
    public var body: Never { fatalError("no body") }
}

/// A view that draws something (the stand-in for the modifiers' results).
public struct _ModifiedView<Content: View>: View {
    nonisolated init() {}
    public var body: Never { fatalError("no body") }
}

/// A localized string's key.
public struct LocalizedStringKey: ExpressibleByStringInterpolation, Equatable, Sendable {
    public init(_ value: String) {}
    public init(stringLiteral value: String) {}
}

/// Text.
public struct Text: View, Equatable, Sendable {
    nonisolated public init(_ key: LocalizedStringKey, tableName: String? = nil, bundle: Bundle? = nil, comment: StaticString? = nil) {}
    @_disfavoredOverload nonisolated public init<S: StringProtocol>(_ content: S) {}
    public var body: Never { fatalError("no body") }
}

/// A control that performs an action.
public struct Button<Label: View>: View {
    @preconcurrency nonisolated public init(action: @escaping @MainActor () -> Void, @ViewBuilder label: () -> Label) {}
    public var body: Never { fatalError("no body") }
}

extension Button where Label == Text {
    @preconcurrency nonisolated public init(_ titleKey: LocalizedStringKey, action: @escaping @MainActor () -> Void) {}
    @_disfavoredOverload @preconcurrency nonisolated public init<S: StringProtocol>(_ title: S, action: @escaping @MainActor () -> Void) {}
}

/// An image.
public struct Image: View, Equatable, Sendable {
    nonisolated public init(systemName: String) {}
    public var body: Never { fatalError("no body") }
}

/// Alignment across the horizontal axis.
public struct HorizontalAlignment: Equatable, Sendable {
    public static let leading = HorizontalAlignment()
    public static let center = HorizontalAlignment()
    public static let trailing = HorizontalAlignment()
}

/// Alignment in both axes.
public struct Alignment: Equatable, Sendable {
    public static let center = Alignment()
    public static let bottom = Alignment()
    public static let top = Alignment()
}

/// A vertical stack.
public struct VStack<Content: View>: View {
    nonisolated public init(alignment: HorizontalAlignment = .center, spacing: CGFloat? = nil, @ViewBuilder content: () -> Content) {}
    public var body: Never { fatalError("no body") }
}

/// Alignment across the vertical axis.
public struct VerticalAlignment: Equatable, Sendable {
    public static let top = VerticalAlignment()
    public static let center = VerticalAlignment()
    public static let bottom = VerticalAlignment()
}

/// A horizontal stack.
public struct HStack<Content: View>: View {
    nonisolated public init(alignment: VerticalAlignment = .center, spacing: CGFloat? = nil, @ViewBuilder content: () -> Content) {}
    public var body: Never { fatalError("no body") }
}

/// Views computed from a collection of identified data: `struct ForEach<Data, ID, Content> where Data :
/// RandomAccessCollection, ID : Hashable`.
public struct ForEach<Data: RandomAccessCollection, ID: Hashable, Content> {}

extension ForEach: View where Content: View {
    public var body: Never { fatalError("no body") }
    /// Views for each element, identified by the key path `id`.
    nonisolated public init(_ data: Data, id: KeyPath<Data.Element, ID>, @ViewBuilder content: @escaping (Data.Element) -> Content) {}
}

/// A form.
public struct Form<Content: View>: View {
    nonisolated public init(@ViewBuilder content: () -> Content) {}
    public var body: Never { fatalError("no body") }
}

/// A navigation view (deprecated in iOS 16 for NavigationStack; the package's floor is iOS 15).
public struct NavigationView<Content: View>: View {
    nonisolated public init(@ViewBuilder content: () -> Content) {}
    public var body: Never { fatalError("no body") }
}

/// A navigation stack (iOS 16): `nonisolated struct NavigationStack<Data, Root> where Root : View`.
public struct NavigationStack<Data, Root: View>: View {
    public var body: Never { fatalError("no body") }
}

extension NavigationStack where Data == NavigationPath {
    /// A stack that manages its own navigation state.
    nonisolated public init(@ViewBuilder root: () -> Root) {}
}

/// A type-erased list of what a navigation stack shows.
public struct NavigationPath {
    public init() {}
}

/// A group of views.
public struct Group<Content> {}

extension Group: View where Content: View {
    nonisolated public init(@ViewBuilder content: () -> Content) {}
    public var body: Never { fatalError("no body") }
}

/// A progress indicator.
public struct ProgressView<Label: View, CurrentValueLabel: View>: View {
    public var body: Never { fatalError("no body") }
}

extension ProgressView where Label == EmptyView, CurrentValueLabel == EmptyView {
    nonisolated public init() {}
}

/// A switch.
public struct Toggle<Label: View>: View {
    public var body: Never { fatalError("no body") }
}

extension Toggle where Label == Text {
    nonisolated public init(_ titleKey: LocalizedStringKey, isOn: Binding<Bool>) {}
    @_disfavoredOverload nonisolated public init<S: StringProtocol>(_ title: S, isOn: Binding<Bool>) {}
}

/// A text field.
public struct TextField<Label: View>: View {
    public var body: Never { fatalError("no body") }
}

extension TextField where Label == Text {
    nonisolated public init(_ titleKey: LocalizedStringKey, text: Binding<String>) {}
    @_disfavoredOverload nonisolated public init<S: StringProtocol>(_ title: S, text: Binding<String>) {}
}

/// A secure text field.
public struct SecureField<Label: View>: View {
    public var body: Never { fatalError("no body") }
}

extension SecureField where Label == Text {
    nonisolated public init(_ titleKey: LocalizedStringKey, text: Binding<String>) {}
    @_disfavoredOverload nonisolated public init<S: StringProtocol>(_ title: S, text: Binding<String>) {}
}

// MARK: state

/// A property of a view whose value SwiftUI keeps.
public protocol DynamicProperty {}

/// State a view owns.
@propertyWrapper
public struct State<Value>: DynamicProperty {
    private final class Box: @unchecked Sendable {
        var value: Value
        init(_ value: Value) { self.value = value }
    }
    private let box: Box
    public init(wrappedValue value: Value) { box = Box(value) }
    public init(initialValue value: Value) { box = Box(value) }
    public var wrappedValue: Value {
        get { box.value }
        nonmutating set { box.value = newValue }
    }
    public var projectedValue: Binding<Value> {
        let box = self.box
        return Binding(get: { box.value }, set: { box.value = $0 })
    }
}

extension State where Value: ExpressibleByNilLiteral {
    /// Nil state (`@State private var x: T?`). In an extension, as the SDK declares it: a property of a
    /// non-optional type and no initial value (set in the view's init with `State(initialValue:)`) does not use it.
    public init() { self.init(wrappedValue: nil) }
}

extension State: Sendable where Value: Sendable {}

/// A reference to a value owned elsewhere.
@propertyWrapper @dynamicMemberLookup
public struct Binding<Value> {
    private let getter: @Sendable () -> Value
    private let setter: @Sendable (Value) -> Void

    // The iOS 18 SDK's form: @Sendable closures, nonisolated. (The iOS 26 SDK adds @isolated(any), which lets a closure
    // written in a main-actor view keep that isolation; code that compiles against this form compiles against both.)
    @preconcurrency public init(get: @escaping @Sendable () -> Value, set: @escaping @Sendable (Value) -> Void) {
        getter = get
        setter = set
    }
    public var wrappedValue: Value {
        get { fatalError("not read on Linux") }
        nonmutating set {}
    }
    public var projectedValue: Binding<Value> { self }
    public subscript<Subject>(dynamicMember keyPath: WritableKeyPath<Value, Subject>) -> Binding<Subject> {
        fatalError("not read on Linux")
    }
}

extension Binding: @unchecked Sendable where Value: Sendable {}

/// The values a view reads from its environment.
public struct EnvironmentValues {
    /// The scene's phase.
    public var scenePhase: ScenePhase { .active }
}

/// A value from the environment.
@propertyWrapper
public struct Environment<Value>: DynamicProperty {
    private let keyPath: KeyPath<EnvironmentValues, Value>
    public init(_ keyPath: KeyPath<EnvironmentValues, Value>) { self.keyPath = keyPath }
    public var wrappedValue: Value { EnvironmentValues()[keyPath: keyPath] }
}

/// The operational state of a scene.
public enum ScenePhase: Comparable, Hashable, Sendable {
    case background
    case inactive
    case active
}

/// An observable object a view creates and owns.
@propertyWrapper
public struct StateObject<ObjectType: ObservableObject>: DynamicProperty {
    private let thunk: () -> ObjectType
    public init(wrappedValue thunk: @autoclosure @escaping () -> ObjectType) { self.thunk = thunk }
    @MainActor public var wrappedValue: ObjectType { thunk() }
}

/// An observable object a view is given.
@propertyWrapper
public struct ObservedObject<ObjectType: ObservableObject>: DynamicProperty {
    private let object: ObjectType
    public init(wrappedValue: ObjectType) { object = wrappedValue }
    @MainActor public var wrappedValue: ObjectType { object }
}

// MARK: modifiers

/// A font.
public struct Font: Hashable, Sendable {
    public static let title = Font()
    public static let title2 = Font()
    public static let title3 = Font()
    public static let footnote = Font()
    public static func system(size: CGFloat) -> Font { Font() }
}

/// A color.
public struct Color: Hashable, Sendable {
    public static let red = Color()
    public static let secondary = Color()
}

/// Text alignment.
public enum TextAlignment: Hashable, Sendable { case leading, center, trailing }

/// Capitalization of text input.
public struct TextInputAutocapitalization: Sendable {
    public static let never = TextInputAutocapitalization()
}

extension View {
    nonisolated public func modifier<T>(_ modifier: T) -> ModifiedContent<Self, T> { ModifiedContent(content: self, modifier: modifier) }
    nonisolated public func font(_ font: Font?) -> some View { _ModifiedView<Self>() }
    nonisolated public func foregroundColor(_ color: Color?) -> some View { _ModifiedView<Self>() }
    nonisolated public func multilineTextAlignment(_ alignment: TextAlignment) -> some View { _ModifiedView<Self>() }
    nonisolated public func padding() -> some View { _ModifiedView<Self>() }
    nonisolated public func disabled(_ disabled: Bool) -> some View { _ModifiedView<Self>() }
    // `@_inheritActorContext`: the documentation does not show underscored attributes, but the action runs on the view's
    // main actor, which every `.task { state = await … }` relies on.
    nonisolated public func task(
        priority: TaskPriority = .userInitiated,
        @_inheritActorContext _ action: sending @escaping @isolated(any) () async -> Void
    ) -> some View {
        _ModifiedView<Self>()
    }
    nonisolated public func onAppear(perform action: (() -> Void)? = nil) -> some View { _ModifiedView<Self>() }
    @available(iOS, introduced: 14.0, deprecated: 17.0, message: "Use `onChange` with a two or zero parameter action closure instead.")
    nonisolated public func onChange<V: Equatable>(of value: V, perform action: @escaping (_ newValue: V) -> Void) -> some View {
        _ModifiedView<Self>()
    }
    nonisolated public func overlay<V: View>(alignment: Alignment = .center, @ViewBuilder content: () -> V) -> some View {
        _ModifiedView<Self>()
    }
    nonisolated public func navigationTitle<S: StringProtocol>(_ title: S) -> some View { _ModifiedView<Self>() }
    nonisolated public func textInputAutocapitalization(_ autocapitalization: TextInputAutocapitalization?) -> some View {
        _ModifiedView<Self>()
    }
}

// MARK: apps and scenes

/// A part of an app's user interface with a life cycle the system manages.
@MainActor @preconcurrency
public protocol Scene {
    associatedtype Body: Scene
    @SceneBuilder @MainActor @preconcurrency var body: Body { get }
}

extension Never: Scene {}

/// Builds scenes from closures.
@resultBuilder
public struct SceneBuilder {
    public static func buildBlock<Content: Scene>(_ content: Content) -> Content { content }
}

/// A scene of windows showing `Content`.
public struct WindowGroup<Content: View>: Scene {
    nonisolated public init(@ViewBuilder content: () -> Content) {}
    public var body: Never { fatalError("no body") }
}

/// An app.
@MainActor @preconcurrency
public protocol App {
    associatedtype Body: Scene
    @SceneBuilder @MainActor @preconcurrency var body: Body { get }
    @MainActor @preconcurrency init()
}

extension App {
    /// The app's entry point.
    @MainActor @preconcurrency public static func main() {}
}
