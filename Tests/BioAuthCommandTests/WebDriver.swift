import AsyncHTTPClient
import Foundation
import NIOCore
import Testing

@testable import bioauth

#if canImport(Glibc)
import Glibc
#endif

/// A headless Chromium driven through chromedriver over W3C WebDriver (plain HTTP and JSON), for the console's browser
/// tests. Both come from Debian's `chromium` and `chromium-driver` packages (`.ci/run` installs them).
final class WebDriver: @unchecked Sendable {
    static let chromedriver = "/usr/bin/chromedriver"
    static let chromium = "/usr/bin/chromium"

    /// The W3C name of an element reference in JSON.
    private static let elementKey = "element-6066-11e4-a52e-4f735466cecf"

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private let process: Process
    private let base: String
    private let http: HTTPClient
    private var session = ""

    private init(process: Process, base: String, http: HTTPClient) {
        self.process = process
        self.base = base
        self.http = http
    }

    /// Starts chromedriver on a free port and a headless browser session, runs `body`, and stops both.
    static func run(http: HTTPClient, _ body: (WebDriver) async throws -> Void) async throws {
        let port = try await ServerProcess.freeLoopbackPort()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: chromedriver)
        process.arguments = ["--port=\(port)"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let driver = WebDriver(process: process, base: "http://127.0.0.1:\(port)", http: http)
        do {
            try await driver.waitUntilReady()
            let created = try await driver.call(
                "POST",
                "/session",
                [
                    "capabilities": [
                        "alwaysMatch": [
                            "browserName": "chrome",
                            "goog:chromeOptions": [
                                "binary": chromium,
                                "args": [
                                    "--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,1000", "--lang=en-US",
                                    "--host-resolver-rules=MAP localhost 127.0.0.1",
                                ],
                            ],
                        ]
                    ]
                ]
            )
            guard let id = (created as? [String: Any])?["sessionId"] as? String else {
                throw Failure(description: "no session: \(String(describing: created))")
            }
            driver.session = id
            try await body(driver)
            _ = try? await driver.call("DELETE", "/session/\(id)", Optional<[String: Any]>.none)
        } catch {
            if !driver.session.isEmpty { _ = try? await driver.call("DELETE", "/session/\(driver.session)", Optional<[String: Any]>.none) }
            await stop(process)
            throw error
        }
        await stop(process)
    }

    /// Ends chromedriver (it ends its browsers), killing it if it has not ended within 5 s.
    private static func stop(_ process: Process) async {
        process.terminate()
        let deadline = ContinuousClock.now + .seconds(5)
        while process.isRunning && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    private func waitUntilReady() async throws {
        for _ in 0..<100 {
            if let status = try? await call("GET", "/status", nil) as? [String: Any], status["ready"] as? Bool == true { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw Failure(description: "chromedriver did not start")
    }

    // MARK: Commands

    func go(_ url: String) async throws { _ = try await call("POST", "/session/\(session)/url", ["url": url]) }

    var currentURL: String { get async throws { try await call("GET", "/session/\(session)/url", nil) as? String ?? "" } }

    var source: String { get async throws { try await call("GET", "/session/\(session)/source", nil) as? String ?? "" } }

    /// The first element matching a CSS selector, waiting up to 10 s for it (a click's page may still be loading).
    func element(_ css: String) async throws -> String {
        let deadline = ContinuousClock.now + .seconds(10)
        while true {
            let found = try? await call("POST", "/session/\(session)/element", ["using": "css selector", "value": css]) as? [String: Any]
            if let id = found?[Self.elementKey] as? String { return id }
            guard ContinuousClock.now < deadline else { throw Failure(description: "no element \(css) in \((try? await source) ?? "?")") }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// Waits up to 10 s until the page holds `text`; the page then.
    @discardableResult
    func waitForSource(containing text: String) async throws -> String {
        let deadline = ContinuousClock.now + .seconds(10)
        while true {
            let page = try await source
            if page.contains(text) || ContinuousClock.now >= deadline { return page }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// Waits up to 10 s until the page's address ends with `suffix`; the address then.
    @discardableResult
    func waitForURL(endingWith suffix: String) async throws -> String {
        let deadline = ContinuousClock.now + .seconds(10)
        while true {
            let url = try await currentURL
            if url.hasSuffix(suffix) || ContinuousClock.now >= deadline { return url }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    func type(_ css: String, _ text: String) async throws {
        _ = try await call("POST", "/session/\(session)/element/\(try await element(css))/value", ["text": text])
    }

    func click(_ css: String) async throws { _ = try await call("POST", "/session/\(session)/element/\(try await element(css))/click", [:]) }

    func text(_ css: String) async throws -> String {
        try await call("GET", "/session/\(session)/element/\(try await element(css))/text", nil) as? String ?? ""
    }

    /// The value of the browser's cookie `name` for the current page.
    func cookie(named name: String) async throws -> String {
        let cookie = try await call("GET", "/session/\(session)/cookie/\(name)", nil) as? [String: Any]
        return cookie?["value"] as? String ?? ""
    }

    /// Whether a JavaScript alert is open (a script that ran would have opened one).
    var alertIsOpen: Bool { get async { (try? await call("GET", "/session/\(session)/alert/text", nil)) != nil } }

    /// A PNG of the window, written to `path`.
    func screenshot(to path: URL) async throws {
        guard let base64 = try await call("GET", "/session/\(session)/screenshot", nil) as? String, let png = Data(base64Encoded: base64) else {
            throw Failure(description: "no screenshot")
        }
        try FileManager.default.createDirectory(at: path.deletingLastPathComponent(), withIntermediateDirectories: true)
        try png.write(to: path)
    }

    /// Runs `script` in the page as an async function body (WebDriver's `execute/async`): it gets `arguments` and
    /// finishes by calling the last one with its result.
    func executeAsync(_ script: String, _ arguments: [Any] = []) async throws -> Any? {
        try await call("POST", "/session/\(session)/execute/async", ["script": script, "args": arguments])
    }

    // MARK: WebAuthn (W3C WebAuthn §11: the virtual authenticator extension)

    /// Adds a virtual platform authenticator (CTAP2, internal transport, resident keys, user verification that
    /// succeeds) to the session; returns its id. Browsers then use it for every `navigator.credentials` call.
    func addVirtualAuthenticator() async throws -> String {
        let value = try await call(
            "POST",
            "/session/\(session)/webauthn/authenticator",
            [
                "protocol": "ctap2", "transport": "internal", "hasResidentKey": true, "hasUserVerification": true, "isUserVerified": true,
                "isUserConsenting": true,
            ]
        )
        guard let id = value as? String else { throw Failure(description: "no authenticator id: \(String(describing: value))") }
        return id
    }

    /// The credentials the virtual authenticator holds: id (base64url), rpId, userHandle (base64url), signCount.
    func credentials(of authenticator: String) async throws -> [[String: Any]] {
        try await call("GET", "/session/\(session)/webauthn/authenticator/\(authenticator)/credentials", nil) as? [[String: Any]] ?? []
    }

    /// One WebDriver command; its `value`. A WebDriver error is thrown.
    @discardableResult
    private func call(_ method: String, _ path: String, _ body: [String: Any]?) async throws -> Any? {

        var request = HTTPClientRequest(url: base + path)
        request.method = .init(rawValue: method)
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: body)))
        }
        let response = try await http.execute(request, timeout: .seconds(60))
        let bytes = try await response.body.collect(upTo: 32 << 20)
        let json = try JSONSerialization.jsonObject(with: Data(buffer: bytes), options: [.fragmentsAllowed]) as? [String: Any]
        let value = json?["value"]
        if response.status.code >= 400 {
            throw Failure(description: "\(method) \(path): \((value as? [String: Any])?["message"] ?? response.status)")
        }
        return value is NSNull ? nil : value
    }
}
