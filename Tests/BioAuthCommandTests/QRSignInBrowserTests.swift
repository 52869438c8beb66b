import AsyncHTTPClient
import BioAuthClient
import BioAuthCore
import BioAuthServer
import Foundation
import NIOCore
import TestTools
import Testing

@testable import bioauth

/// Scan to sign in as a customer meets it: the web page in headless Chromium shows a QR code the server drew; ZBar reads
/// it from a screenshot, as a phone's camera would; the simulated phone (`bioauth device`) opens it, shows where the page
/// was opened, and approves with the number the page shows; the page signs in without reloading.
extension InABrowser {
    @Suite("Scan to sign in, in a browser")
    struct QRSignInBrowserTests {
        /// A simulated phone signed in as `username` with biometric sign-in on, against `server`.
        static func phone(_ server: String, _ username: String, _ password: String, folder: URL) async throws -> (DeviceSession, Output) {
            let output = Output()
            let phone = try SimulatedPhone(folder: folder, kind: nil, server: server, language: .english)
            try await phone.launch()
            let session = DeviceSession(phone: phone, write: { output.write($0) }, ask: { _ in "match" })
            #expect(await session.run(["signin", username, password]) == 0)
            #expect(await session.run(["enable-biometrics"]) == 0, "\(output.text)")
            return (session, output)
        }

        final class Output: @unchecked Sendable {
            private let lock = NSLock()
            private var lines: [String] = []
            func write(_ line: String) { lock.withLock { lines.append(line) } }
            var text: String { lock.withLock { lines.joined(separator: "\n") } }
            func clear() { lock.withLock { lines.removeAll() } }
        }

        /// What the page's QR code holds, read from a screenshot by ZBar.
        static func scanPage(_ browser: WebDriver, name: String) async throws -> String {
            let shot = InABrowser.PasskeyBrowserTests.screenshots.appendingPathComponent(name)
            try await browser.screenshot(to: shot)
            let read = try #require(try InABrowser.ConsoleBrowserTests.scan(shot), "\(TestTool.missing(.zbar))")
            return read.trimmingCharacters(in: .whitespacesAndNewlines)
        }

        @Test(
            "the page's QR code, read by ZBar, is approved on the phone with the page's number and the page signs in; refused: a replayed code, another account's phone, another browser",
            .enabled(if: TestTool.ready(.zbar), Comment(rawValue: TestTool.missing(.zbar)))
        )
        func scanToSignIn() async throws {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("qr-browser-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: folder) }
            try await InABrowser.PasskeyBrowserTests.withServer { origin, api, http in
                let (alice, aliceSaid) = try await Self.phone(origin, "alice", "correct horse", folder: folder.appendingPathComponent("alice"))
                let (bob, bobSaid) = try await Self.phone(origin, "bob", "battery staple", folder: folder.appendingPathComponent("bob"))
                try await WebDriver.run(http: http) { browser in
                    try await browser.go("\(origin)/web")
                    _ = try await browser.waitForSource(containing: "A new code every 30 seconds.")
                    let number = try await browser.text("#qr-number")
                    let url = try await Self.scanPage(browser, name: "qr-sign-in.png")
                    #expect(url.hasPrefix("\(origin)/web/q/"), "the code holds the sign-in URL: \(url)")

                    // Alice's phone opens it: the page's browser, platform and address, and three numbers to pick from.
                    aliceSaid.clear()
                    #expect(await alice.run(["scan", url]) == 0, "\(aliceSaid.text)")
                    let listed = aliceSaid.text
                    #expect(listed.contains("Sign in on Chrome on Linux? Asked by BioAuth") && listed.contains(number), "\(listed)")
                    let approvalID = try #require(listed.split(separator: " ").first { $0.count == 36 }.map(String.init))
                    _ = try await browser.waitForSource(containing: "Scanned. Confirm on your phone.")

                    // The same code again, from Alice's or anyone's phone, is refused.
                    #expect(
                        await alice.run(["scan", url]) == 1 && aliceSaid.text.contains("qr_code_used") || aliceSaid.text.contains("scanned already")
                    )
                    // Bob's phone cannot answer Alice's request.
                    #expect(await bob.run(["approve", approvalID, number]) == 1, "\(bobSaid.text)")

                    // Another browser (no cookie) learns nothing about it.
                    let qrID = try #require(try await browser.executeAsync("arguments[0](qr && qr.id)") as? String)
                    var request = HTTPClientRequest(url: "\(origin)/v1/qr-sign-ins/\(qrID)/session")
                    request.method = .POST
                    request.headers.add(name: "Content-Type", value: "application/json")
                    request.body = .bytes(ByteBuffer(string: #"{"installationId":"elsewhere"}"#))
                    let stranger = try await http.execute(request, timeout: .seconds(10))
                    #expect(stranger.status.code == 403)

                    aliceSaid.clear()
                    #expect(await alice.run(["approve", approvalID, number]) == 0, "\(aliceSaid.text)")
                    let page = try await browser.waitForSource(containing: "Signed in as alice (approved on your phone)")
                    #expect(page.contains("Signed in as alice"))
                    try await browser.screenshot(to: InABrowser.PasskeyBrowserTests.screenshots.appendingPathComponent("qr-signed-in.png"))

                    // The session is Alice's, approved on her phone.
                    let tokens = try await api.signIn(username: "alice", password: "correct horse", installationID: "check")
                    let requests = try await api.approvals(status: "approved", accessToken: tokens.accessToken)
                    #expect(requests.first?.channel.browser == "Chrome" && requests.first?.signedApproval != nil)

                    // Signed out, the page shows a fresh code at once.
                    try await browser.click("#sign-out")
                    _ = try await browser.waitForSource(containing: "Signed out.")
                    _ = try await browser.waitForSource(containing: "A new code every 30 seconds.")
                    let next = try await Self.scanPage(browser, name: "qr-sign-in-again.png")
                    #expect(next != url && next.hasPrefix("\(origin)/web/q/"))
                    try await browser.click("#language")
                    _ = try await browser.waitForSource(containing: "用银行 App 扫码登录")
                    try await browser.screenshot(to: InABrowser.PasskeyBrowserTests.screenshots.appendingPathComponent("qr-sign-in-zh-Hans.png"))
                }
            }
        }
    }
}
