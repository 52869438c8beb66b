import Testing

@testable import BioAuthClient

@Suite("The name a device is registered under")
struct DeviceNameTests {
    @Test("the device's own name, fitted to the display-name rule; else its model (an iPad is not called \"iPhone\"); else \"iPhone\"")
    func fallbacks() {
        #expect(BioAuthFlows.Configuration(deviceName: "Alice’s iPad 🍎", deviceModel: "iPad").registeredDeviceName == "Alice’s iPad")
        #expect(BioAuthFlows.Configuration(deviceName: "🦄✨", deviceModel: "iPad").registeredDeviceName == "iPad")
        #expect(BioAuthFlows.Configuration(deviceName: "\u{200B}\u{3000}", deviceModel: "iPad").registeredDeviceName == "iPad")
        #expect(BioAuthFlows.Configuration(deviceName: "🦄✨", deviceModel: "📱").registeredDeviceName == "iPhone")
        #expect(BioAuthFlows.Configuration(deviceName: "").registeredDeviceName == "iPhone")
    }
}
