import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The web sign-in page (`bioauth serve --passkey-web`): a page, a script and a style sheet under `/web`, served from
/// the bundle as they are. The script talks to the JSON API like the apps do (password sign-in, passkey sign-in,
/// creating and revoking passkeys); nothing is rendered from data on the server, so there is nothing to escape here,
/// and the script builds its lists with `textContent` only.
///
/// Every answer carries a Content-Security-Policy that allows the page's own script and style and requests to this
/// origin only (no inline script, no framing; images from this origin and the `blob:` URLs the script makes of the
/// QR code the server drew), and `Cache-Control: no-store` for the page. `/web/q/<code>`, what a sign-in QR code holds,
/// answers a page that says to scan it with the bank's app (a browser that opens it signs nobody in).
struct PasskeyWebPage: Sendable {
    let page: ByteBuffer
    let script: ByteBuffer
    let stylesheet: ByteBuffer
    /// What a browser that opens a sign-in QR code's URL is told.
    let scanPage = ByteBuffer(
        string: """
            <!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <title>Scan with your bank's app</title><link rel="stylesheet" href="/web/web.css"></head><body><main>
            <h1>Scan this code with your bank's app</h1><p>Opening it in a browser signs nobody in. 请用银行 App 扫描此二维码。</p>
            </main></body></html>
            """
    )

    static func load() throws -> PasskeyWebPage {
        guard let folder = Bundle.module.url(forResource: "Web", withExtension: nil) else {
            throw ConfigurationError(message: "the web sign-in page is missing from the server's resources")
        }
        func read(_ name: String) throws -> ByteBuffer { ByteBuffer(bytes: try Data(contentsOf: folder.appendingPathComponent(name))) }
        return PasskeyWebPage(page: try read("index.html"), script: try read("web.js"), stylesheet: try read("web.css"))
    }

    /// What every answer under `/web` carries.
    static let securityHeaders: HTTPFields = {
        var headers = HTTPFields.browserPage(
            contentSecurityPolicy: "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' blob:; "
                + "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
        )
        // The browser may use passkeys here, and nothing else.
        headers[HTTPField.Name("Permissions-Policy")!] =
            "publickey-credentials-get=(self), publickey-credentials-create=(self), camera=(), microphone=(), geolocation=()"
        return headers
    }()

    func register(on router: Router<BioAuthRequestContext>) {
        router.get("/web") { _, _ in self.answer(page, type: "text/html; charset=utf-8", cache: "no-store") }
        router.get("/web/web.js") { _, _ in self.answer(script, type: "text/javascript; charset=utf-8", cache: "no-cache") }
        router.get("/web/web.css") { _, _ in self.answer(stylesheet, type: "text/css; charset=utf-8", cache: "no-cache") }
        router.get("/web/q/:code") { _, _ in self.answer(scanPage, type: "text/html; charset=utf-8", cache: "no-store") }
    }

    private func answer(_ body: ByteBuffer, type: String, cache: String) -> Response {
        var headers = Self.securityHeaders
        headers[.contentType] = type
        headers[.cacheControl] = cache
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: body))
    }
}
