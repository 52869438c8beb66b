// UIKit as the iOS 18 SDK declares it to Swift, for the parts BioAuth and its example use. Declarations from
// developer.apple.com/documentation/uikit: UIApplication (a main-actor class: shared, applicationState, State, and
// the nonisolated notification names didBecomeActiveNotification, willResignActiveNotification,
// didEnterBackgroundNotification, willEnterForegroundNotification, connectedScenes), UIDevice (main actor: current,
// name), UIScene and UIWindowScene (main actor: windows, keyWindow from iOS 15) and UIWindow (main actor: isKeyWindow;
// otherwise only as the anchor AuthenticationServices presents over).
@_exported import Foundation  // UIKit re-exports Foundation, as the SDK module does

/// The app.
@MainActor
open class UIApplication {
    /// The app's states.
    public enum State: Int, @unchecked Sendable {
        case active = 0
        case inactive = 1
        case background = 2
    }

    private static let instance = UIApplication()
    private var state: State = .background

    /// The app.
    open class var shared: UIApplication { instance }
    /// Whether the app is active, inactive or in the background.
    open var applicationState: State { state }
    /// The app's connected scenes (iOS 13). The stand-in has none: the example's fallback is what it exercises.
    open var connectedScenes: Set<UIScene> { [] }

    nonisolated public static let didBecomeActiveNotification = NSNotification.Name("UIApplicationDidBecomeActiveNotification")
    nonisolated public static let willResignActiveNotification = NSNotification.Name("UIApplicationWillResignActiveNotification")
    nonisolated public static let didEnterBackgroundNotification = NSNotification.Name("UIApplicationDidEnterBackgroundNotification")
    nonisolated public static let willEnterForegroundNotification = NSNotification.Name("UIApplicationWillEnterForegroundNotification")

    /// Moves the simulated app to `state`, posting the notifications iOS posts on the way. (iOS posts them on the main
    /// thread; Linux's Foundation delivers a notification to `OperationQueue.main` by waiting for the main queue, which
    /// would wait for itself, so the stand-in posts from another thread and waits until they are delivered.)
    @_spi(Simulation) public func simulateTransition(to newState: State) async {
        var names: [NSNotification.Name] = []
        switch (state, newState) {
        case (.background, .active), (.background, .inactive):
            names.append(Self.willEnterForegroundNotification)
            if newState == .active { names.append(Self.didBecomeActiveNotification) }
        case (.inactive, .active):
            names.append(Self.didBecomeActiveNotification)
        case (.active, .inactive):
            names.append(Self.willResignActiveNotification)
        case (.active, .background):
            names += [Self.willResignActiveNotification, Self.didEnterBackgroundNotification]
        case (.inactive, .background):
            names.append(Self.didEnterBackgroundNotification)
        default: break
        }
        state = newState
        let posted = names
        await Task.detached { for name in posted { NotificationCenter.default.post(name: name, object: nil) } }.value
    }
}

/// The device.
@MainActor
open class UIDevice {
    private static let instance = UIDevice()
    /// The current device.
    open class var current: UIDevice { instance }
    /// The device's name (on iOS 16 and later a generic name such as "iPhone" unless the app has the entitlement).
    open var name: String { "iPhone" }
    /// The model of the device, such as "iPhone" or "iPad".
    open var model: String { "iPhone" }
}

/// A window (a main-actor UIView subclass in the SDK; the view hierarchy is not declared here): what
/// AuthenticationServices presents its passkey sheet over (`ASPresentationAnchor`).
@MainActor
open class UIWindow {
    public init() {}
    /// Whether this is its scene's key window (iOS 15 and later).
    open var isKeyWindow: Bool { false }
}

/// One instance of the app's UI (a main-actor UIResponder subclass in the SDK, hashable as every NSObject is).
@MainActor
open class UIScene: Hashable {
    nonisolated public static func == (lhs: UIScene, rhs: UIScene) -> Bool { lhs === rhs }
    nonisolated public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

/// A scene that shows windows.
@MainActor
open class UIWindowScene: UIScene {
    /// The scene's windows.
    open var windows: [UIWindow] { [] }
    /// The scene's key window (iOS 15 and later).
    open var keyWindow: UIWindow? { nil }
}
