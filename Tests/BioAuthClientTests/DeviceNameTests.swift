import Testing

@testable import BioAuthClient

@Suite("The name a device is registered under")
struct DeviceNameTests {
    @Test("the user's own name, fitted to the display-name rule; else the model and hardware identifier; else \"iPhone\"")
    func fallbacks() {
        func name(_ user: String, _ model: String = "iPhone", _ identifier: String? = "iPhone15,2") -> String {
            BioAuthFlows.Configuration(deviceName: user, deviceModel: model, deviceModelIdentifier: identifier).registeredDeviceName
        }
        #expect(name("Alice’s iPad 🍎", "iPad") == "Alice’s iPad")
        #expect(name("", "iPad", "iPad13,4") == "iPad (iPad13,4)")
        #expect(name("🦄✨", "iPad", "iPad13,4") == "iPad (iPad13,4)")
        #expect(name("\u{200B}\u{3000}", "iPad", nil) == "iPad")
        #expect(name("🦄✨", "📱", nil) == "iPhone")
        #expect(name("") == "iPhone (iPhone15,2)")
        // What UIDevice.current.name answers since iOS 16 for every customer: no better than the model, so described.
        #expect(name("iPhone") == "iPhone (iPhone15,2)")
        #expect(name("", "iPhone", "iPhone") == "iPhone", "an identifier that says no more is left out")
    }

    @Test("the hardware identifier: the Simulator's simulated device, else uname's machine")
    func identifier() {
        #expect(DeviceHardware.modelIdentifier(environment: ["SIMULATOR_MODEL_IDENTIFIER": "iPhone17,1"]) == "iPhone17,1")
        let machine = DeviceHardware.modelIdentifier(environment: [:])
        #expect(machine?.isEmpty == false, "uname answers on Linux too (x86_64, aarch64)")
    }
}
