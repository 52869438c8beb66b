// expect: main actor-isolated
// UIDevice is main-actor isolated: a nonisolated function can't read the device's name synchronously.
import UIKit

func deviceName() -> String {
    UIDevice.current.name
}
