import BioAuthClient
import BioAuthCore
import BioAuthTesting
import Foundation

/// A simulated phone whose state lives in a folder, so a person can drive it step by step:
///
/// - `store/`: the app's secure store (session state, tokens, installation id, counter) — plain files, **not secure**
/// - `keys/`: the software device keys — plain files, **not secure**
/// - `sensor.json`: the simulated sensor (kind, enrollment, failures, lockout, queued touches)
/// - `phone.json`: the server URL and when the app went to the background
final class SimulatedPhone: @unchecked Sendable {
    struct Settings: Codable {
        var server: String
        var backgroundedAt: Date?
    }

    let folder: URL
    let sensor: SimulatedAuthenticator
    let keys: SoftwareDeviceKeyStore
    let store: FileSecureStore
    let api: BioAuthAPI
    let clock = ManualClock(start: Date())
    let language: Language
    var settings: Settings
    var flows: BioAuthFlows!

    /// Opens (or creates) the phone in `folder`. `kind` and `server` are used when the phone is new or given.
    init(folder: URL, kind: BiometryKind?, server: String?, language: Language) throws {
        self.folder = folder
        self.language = language
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let settingsURL = folder.appendingPathComponent("phone.json")
        var settings = (try? JSONDecoder().decode(Settings.self, from: Data(contentsOf: settingsURL))) ?? Settings(server: "http://127.0.0.1:8080")
        if let server { settings.server = server }
        guard let serverURL = URL(string: settings.server), serverURL.scheme == "http" || serverURL.scheme == "https" else {
            throw DeviceCommandError.usage("the server must be an http(s) URL, not \(settings.server)")
        }
        self.settings = settings
        let sensorURL = folder.appendingPathComponent("sensor.json")
        if let data = try? Data(contentsOf: sensorURL), let state = try? JSONDecoder().decode(SimulatedAuthenticator.State.self, from: data) {
            sensor = SimulatedAuthenticator(restoring: state)
        } else {
            sensor = SimulatedAuthenticator(.init(kind: kind ?? .faceID))
        }
        store = try FileSecureStore(directory: folder.appendingPathComponent("store"))
        keys = SoftwareDeviceKeyStore(authenticator: sensor, storage: try FileSecureStore(directory: folder.appendingPathComponent("keys")))
        api = BioAuthAPI(serverURL: serverURL)
        webOrigin = serverURL.scheme.flatMap { scheme in
            serverURL.host.map { host in "\(scheme)://\(host)" + (serverURL.port.map { ":\($0)" } ?? "") }
        }
    }

    /// The origin of the server's own web pages, whose sign-in QR codes this phone opens (a bank's app names its web
    /// origins in ``BioAuthFlows/Configuration/signInCodeOrigins``; the simulated phone's bank is its server).
    let webOrigin: String?

    /// Starts the app (again).
    func launch() async throws {
        clock.set(Date())
        flows = try await BioAuthFlows(
            api: api,
            authenticator: sensor,
            keyStore: keys,
            store: store,
            clock: clock,
            configuration: .init(
                language: language,
                deviceName: "Simulated \(await sensor.kind == .touchID ? "iPad" : "iPhone")",
                signInCodeOrigins: webOrigin.map { [$0] } ?? []
            )
        )
    }

    /// Writes the sensor and settings back to the folder.
    func save() async throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(await sensor.state).write(to: folder.appendingPathComponent("sensor.json"), options: .atomic)
        try encoder.encode(settings).write(to: folder.appendingPathComponent("phone.json"), options: .atomic)
    }
}

/// A line the user typed that is not a command.
enum DeviceCommandError: Error, CustomStringConvertible {
    case usage(String)
    var description: String {
        switch self {
        case .usage(let message): message
        }
    }
}
