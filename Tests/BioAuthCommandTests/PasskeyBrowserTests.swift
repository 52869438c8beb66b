import AsyncHTTPClient
import BioAuthClient
import BioAuthCore
import BioAuthServer
import Foundation
import Logging
import NIOCore
import Testing

@testable import bioauth

/// The web sign-in page as a bank's customer meets it: headless Chromium through chromedriver, with a WebDriver
/// virtual authenticator (a platform authenticator with resident keys and user verification) standing in for Touch ID
/// or Windows Hello, against a running server. Screenshots go to `.build/passkey-screenshots/` (docs/passkeys/ has
/// copies).
extension InABrowser {
    @Suite("Passkeys in a browser")
    struct PasskeyBrowserTests {
        static let screenshots = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(".build/passkey-screenshots")

        /// A server with the web page on at `http://localhost:PORT` and customers `alice` and `bob`, on `database`.
        static func withServer(
            database: String = ":memory:",
            _ body: (_ origin: String, _ api: BioAuthAPI, HTTPClient) async throws -> Void
        ) async throws {
            let port = try await ServerProcess.freeLoopbackPort()
            // No origins: the page's own, http://localhost:PORT, with rp id localhost.
            let server = try await LoopbackServer.start(configuration: configuration(database: database), port: port, logger: logger)
            let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))
            do {
                let api = BioAuthAPI(serverURL: server.url)
                _ = try await api.createAccount(username: "alice", password: "correct horse")
                _ = try await api.createAccount(username: "bob", password: "battery staple")
                try await body("http://localhost:\(port)", api, http)
            } catch {
                try? await http.shutdown()
                await server.stop()
                throw error
            }
            try await http.shutdown()
            await server.stop()
        }

        /// The web page on, over `database`, everything else throwaway.
        static func configuration(database: String) -> ServerConfiguration {
            var configuration = ServerConfiguration.forTests(database: database)
            configuration.passkeys.webPageEnabled = true
            return configuration
        }

        static var logger: Logger {
            var logger = Logger(label: "passkey-browser-test")
            logger.logLevel = .error
            return logger
        }

        static func passwordSignIn(_ browser: WebDriver, _ origin: String, _ username: String, _ password: String) async throws {
            try await browser.go("\(origin)/web")
            try await browser.type("#username", username)
            try await browser.type("#password", password)
            try await browser.click("#password-sign-in")
            _ = try await browser.waitForSource(containing: "Signed in as \(username)")
        }

        static func createPasskey(_ browser: WebDriver) async throws {
            try await browser.click("#create-passkey")
            _ = try await browser.waitForSource(containing: "Passkey created.")
        }

        static func signOut(_ browser: WebDriver) async throws {
            try await browser.click("#sign-out")
            _ = try await browser.waitForSource(containing: "Signed out.")
        }

        /// What the page says in its status line.
        static func status(_ browser: WebDriver) async throws -> String { try await browser.text("#status") }

        @Test(
            "a customer signs in with a password, creates a passkey, signs out, and signs in with the passkey without typing a username; revoking it ends that"
        )
        func registerAndSignIn() async throws {
            try await Self.withServer { origin, api, http in
                try await WebDriver.run(http: http) { browser in
                    let authenticator = try await browser.addVirtualAuthenticator()
                    try await browser.go("\(origin)/web")
                    try await browser.screenshot(to: Self.screenshots.appendingPathComponent("sign-in.png"))
                    try await Self.passwordSignIn(browser, origin, "alice", "correct horse")
                    #expect(try await browser.waitForSource(containing: "No passkey yet.").contains("No passkey yet."))
                    try await Self.createPasskey(browser)
                    let held = try await browser.credentials(of: authenticator)
                    #expect(held.count == 1 && held.first?["rpId"] as? String == "localhost" && held.first?["isResidentCredential"] as? Bool == true)
                    try await browser.screenshot(to: Self.screenshots.appendingPathComponent("passkey-created.png"))

                    try await Self.signOut(browser)
                    try await browser.click("#passkey-sign-in")
                    let page = try await browser.waitForSource(containing: "Signed in as alice (passkey)")
                    #expect(page.contains("Signed in as alice (passkey)"), "the session says passkey")
                    try await browser.screenshot(to: Self.screenshots.appendingPathComponent("signed-in-with-passkey.png"))

                    // The server's view: the passkey, used for that sign-in.
                    let tokens = try await api.signIn(username: "alice", password: "correct horse", installationID: "check")
                    let passkeys = try await api.passkeys(accessToken: tokens.accessToken)
                    #expect(passkeys.count == 1 && passkeys.first?.lastUsedAt != nil)

                    // Chinese.
                    try await browser.click("#language")
                    _ = try await browser.waitForSource(containing: "通行密钥")
                    try await browser.screenshot(to: Self.screenshots.appendingPathComponent("signed-in-zh-Hans.png"))
                    try await browser.click("#language")
                    _ = try await browser.waitForSource(containing: ">Revoke<")  // the list drawn again in English

                    // Revoked from this page: the passkey no longer signs in.
                    try await browser.click("#passkey-list button.revoke")
                    _ = try await browser.waitForSource(containing: "Passkey revoked.")
                    try await Self.signOut(browser)
                    try await browser.click("#passkey-sign-in")
                    _ = try await browser.waitForSource(containing: "passkey_unknown_credential")
                    #expect(try await Self.status(browser).contains("passkey_unknown_credential"))
                }
            }
        }

        /// Gets options from the server and an assertion from the browser's authenticator, in the page; returns the body
        /// `POST /v1/sessions/passkey` takes. `allow` replaces the allow list the server sent (a credential id).
        static let assertionScript = """
            const [username, allow, done] = arguments;
            (async () => {
              const options = await (await fetch("/v1/sessions/passkey/options", { method: "POST", headers: { "Content-Type": "application/json" },
                body: JSON.stringify(username ? { username } : {}) })).json();
              const publicKey = options.publicKey;
              if (allow) publicKey.allowCredentials = [{ type: "public-key", id: allow }];
              const credential = await navigator.credentials.get({ publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(publicKey) });
              done(JSON.stringify({ challengeId: options.challengeId, installationId: "browser-test", credential: credential.toJSON() }));
            })().catch((error) => done("error: " + error.name + ": " + error.message));
            """

        /// Posts `body` to `POST /v1/sessions/passkey` from the page; returns the status and the problem code.
        static let postScript = """
            const [body, done] = arguments;
            fetch("/v1/sessions/passkey", { method: "POST", headers: { "Content-Type": "application/json" }, body })
              .then(async (response) => done(response.status + " " + ((await response.json()).code || "")))
              .catch((error) => done("error: " + error.message));
            """

        @Test("a replayed assertion, another user's credential and a page on another origin are refused")
        func attacks() async throws {
            let database = FileManager.default.temporaryDirectory.appendingPathComponent("passkey-browser-\(UUID().uuidString).sqlite").path
            defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database + suffix) } }
            try await Self.withServer(database: database) { origin, api, http in
                try await WebDriver.run(http: http) { browser in
                    let authenticator = try await browser.addVirtualAuthenticator()
                    try await Self.passwordSignIn(browser, origin, "alice", "correct horse")
                    try await Self.createPasskey(browser)
                    try await Self.signOut(browser)
                    try await Self.passwordSignIn(browser, origin, "bob", "battery staple")
                    try await Self.createPasskey(browser)
                    try await Self.signOut(browser)
                    let held = try await browser.credentials(of: authenticator)
                    #expect(held.count == 2)
                    let bobHandle = try await api.signIn(username: "bob", password: "battery staple", installationID: "check")
                    let bobsCredential = try #require(try await api.passkeys(accessToken: bobHandle.accessToken).first?.credentialID)
                    let alicesCredential = try #require(
                        held.compactMap { $0["credentialId"] as? String }.first { $0 != Base64URL.encode(bobsCredential) }
                    )

                    // A replayed assertion: the first use signs in, the second is refused.
                    let assertion = try #require(try await browser.executeAsync(Self.assertionScript, ["", alicesCredential]) as? String)
                    #expect(!assertion.hasPrefix("error"), "\(assertion)")
                    #expect(try await browser.executeAsync(Self.postScript, [assertion]) as? String == "201 ")
                    #expect(try await browser.executeAsync(Self.postScript, [assertion]) as? String == "409 challenge_used")

                    // Alice's credential on a sign-in started for bob.
                    let crossed = try #require(try await browser.executeAsync(Self.assertionScript, ["bob", alicesCredential]) as? String)
                    #expect(try await browser.executeAsync(Self.postScript, [crossed]) as? String == "401 passkey_unknown_credential")

                    // The bank's page served from an origin the deployment does not list (another instance on the same
                    // database, as a look-alike host or a forgotten port would be): the browser signs for rp id localhost, as
                    // it may, and the server refuses the origin in the client data.
                    let otherPort = try await ServerProcess.freeLoopbackPort()
                    var configuration = Self.configuration(database: database)
                    configuration.passkeys.origins = [origin]
                    let other = try await LoopbackServer.start(configuration: configuration, port: otherPort, logger: Self.logger)
                    do {
                        try await browser.go("http://localhost:\(otherPort)/web")
                        let foreign = try #require(try await browser.executeAsync(Self.assertionScript, ["", alicesCredential]) as? String)
                        #expect(!foreign.hasPrefix("error"), "\(foreign)")
                        #expect(try await browser.executeAsync(Self.postScript, [foreign]) as? String == "403 passkey_origin_mismatch")
                    } catch {
                        await other.stop()
                        throw error
                    }
                    await other.stop()
                }
            }
        }
    }
}
