import BioAuthCore
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Mustache

/// The operator console: server-rendered HTML under `/console` (off unless ``ServerConfiguration/consoleEnabled``), no
/// JavaScript. Operators sign in with a password and a TOTP code (``Operators``), find a customer and act for them
/// through ``SupportDesk``, each action with a reason.
///
/// Every response carries a strict Content-Security-Policy (no script at all, styles from the console only), refuses
/// framing and caching; every form that changes something carries the session's CSRF token, and a request whose
/// `Origin` is another site is refused. Roles are checked on the server for every request. Text is HTML-escaped by the
/// templates (`{{…}}`), so a name like `<script>` shows as text.
struct Console: Sendable {
    let service: BioAuthService
    let templates: MustacheLibrary
    let stylesheet: ByteBuffer

    /// The service working for the request being served: what a page's action audits records its caller.
    var serving: BioAuthService { service.serving(RequestScope.current.caller) }
    var sessions: ConsoleSessions { ConsoleSessions(service: serving) }
    var desk: SupportDesk { SupportDesk(service: serving) }

    /// Loads the templates bundled with the server.
    static func load(service: BioAuthService) async throws -> Console {
        guard let folder = Bundle.module.url(forResource: "Templates", withExtension: nil) else {
            throw ConfigurationError(message: "the console's templates are missing from the build")
        }
        let templates = try await MustacheLibrary(directory: folder.path)
        let css = try Data(contentsOf: folder.appendingPathComponent("console.css"))
        return Console(service: service, templates: templates, stylesheet: ByteBuffer(bytes: css))
    }

    /// Adds the console's routes: each concern's group (`Console+SignIn.swift`, `+Overview`, `+Customers`, `+Payments`,
    /// `+Admin`), and its stylesheet.
    func register(on router: Router<BioAuthRequestContext>) {
        let console = self
        router.get("/console/static/console.css") { _, _ in
            var headers = Self.securityHeaders
            headers[.contentType] = "text/css; charset=utf-8"
            headers[.cacheControl] = "public, max-age=3600"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: console.stylesheet))
        }
        addSignInRoutes(to: router)
        addOverviewRoutes(to: router)
        addCustomerRoutes(to: router)
        addPaymentRoutes(to: router)
        addAdminRoutes(to: router)
    }
}
