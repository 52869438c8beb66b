import BioAuthCore
import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What an app may read about the device it runs on, to name it for the customer and the bank's support desk.
///
/// Since iOS 16, `UIDevice.current.name` returns the generic name ("iPhone", "iPad") unless Apple grants the app the
/// user-assigned device name entitlement, so every customer's phone would be registered as "iPhone". What needs no
/// entitlement is the model (`UIDevice.current.model`) and the hardware identifier (`iPhone15,2`), which tells one
/// customer's phones and tablets apart; the app may also ask the user for a name of their own.
public enum DeviceHardware {
    /// The hardware identifier (`iPhone15,2`, `iPad13,4`): `uname`'s machine; in the Simulator, the simulated device's
    /// (`SIMULATOR_MODEL_IDENTIFIER`). Nil when it cannot be read.
    public static func modelIdentifier(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if let simulated = environment["SIMULATOR_MODEL_IDENTIFIER"], !simulated.isEmpty { return simulated }
        var system = utsname()
        guard uname(&system) == 0 else { return nil }
        let machine = withUnsafeBytes(of: &system.machine) { bytes in
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
        return machine.isEmpty ? nil : machine
    }

    /// The name a device is registered under: `userName` (what the user called it in the app), fitted to the
    /// display-name rule; else `model` with the hardware identifier ("iPhone (iPhone15,2)"); else "iPhone".
    static func registeredName(userName: String, model: String, identifier: String?) -> String {
        let model = DisplayName.fitted(model, maxCharacters: 40, fallback: "iPhone")
        var described = model
        if let identifier {
            let fitted = DisplayName.fitted(identifier, maxCharacters: 20, fallback: "")
            if !fitted.isEmpty, fitted != model { described = "\(model) (\(fitted))" }
        }
        let named = DisplayName.fitted(userName, maxCharacters: 64, fallback: described)
        // A generic name ("iPhone", what UIDevice.name answers since iOS 16) says no more than the model: describe it.
        return named == model ? described : named
    }
}
