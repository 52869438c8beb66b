import BioAuthCore
import Foundation
import SQLKit

/// A QR code as the web page gets it: the code to draw, the number to show beside it, and the cookie that binds it to
/// this browser.
struct IssuedQRSignIn: Sendable {
    var id: String
    /// What the QR encodes: `<origin>/web/q/<code>`, for the bank's app to scan.
    var url: String
    /// The QR code of ``url``, as an SVG image.
    var svg: String
    var matchNumber: Int
    var expiresAt: Date
    /// The cookie's value (256 random bits; the server keeps its hash).
    var browserCookie: String
}

/// Where a QR sign-in stands, as the page that showed the code sees it.
struct QRSignInState: Sendable {
    enum Status: String, Sendable {
        /// No phone has scanned the code yet.
        case waiting
        /// A phone scanned it; the customer has not answered yet.
        case scanned
        /// Approved: `tokens` carries the session, this once.
        case signedIn = "signed_in"
        case denied
        case expired
    }

    var status: Status
    var tokens: IssuedTokens?
}

extension BioAuthService {
    /// How long a QR code can be scanned: the page replaces it after that.
    static let qrCodeLifetime: TimeInterval = 30
    /// The cookie that binds a QR code to the browser that showed it.
    static let qrCookieName = "bioauth_qr"
    /// Every QR endpoint without the web sign-in page.
    static let qrSignInDisabled = APIError(.qrSignInDisabled, "Scan to sign in needs the web sign-in page (bioauth serve --passkey-web).")

    /// Refuses every QR endpoint unless the web sign-in page is on.
    func requireQRSignIn() throws {
        guard configuration.passkeys.webPageEnabled, !configuration.passkeys.origins.isEmpty else { throw Self.qrSignInDisabled }
    }

    /// A second scan of a code.
    static let qrCodeUsed = APIError(.qrCodeUsed, "This code was scanned already. Scan the one the page shows now.")

    /// A new QR code for the web page, bound to this browser by a cookie, carrying where it was opened (the browser and
    /// platform from the caller's `User-Agent`, the caller's address) for the phone to show.
    func createQRSignIn() async throws -> IssuedQRSignIn {
        let address = caller.address
        let userAgent = caller.userAgent
        try requireQRSignIn()
        guard let origin = configuration.passkeys.origins.first else { throw Self.qrSignInDisabled }
        try await rateLimitShared(
            "passkey-options:" + (address ?? "unknown"),
            name: .passkeyClient,
            limit: configuration.signInChallengesPerClient,
            window: configuration.rateLimitWindow
        )
        let code = newSecret()
        let cookie = newSecret()
        let agent = UserAgentSummary(userAgent ?? "")
        let signIn = QRSignIn(
            id: newID(),
            browserHash: Self.tokenHash(cookie),
            channel: .init(browser: agent.browser, platform: agent.platform, address: address ?? ""),
            matchNumber: randomNumber(in: 10...99),
            createdAt: now,
            expiresAt: now.addingTimeInterval(Self.qrCodeLifetime)
        )
        let url = origin + SignInCodeURL.path + code
        guard let qr = QRCode(text: url) else { throw APIError.internalError }
        try await commit { db in try await db.qrSignIns.insert(signIn, codeHash: Self.tokenHash(code)) }
        return IssuedQRSignIn(
            id: signIn.id,
            url: url,
            svg: qr.svg(pixelsPerModule: 4, label: "Scan with your bank's app"),
            matchNumber: signIn.matchNumber,
            expiresAt: signIn.expiresAt,
            browserCookie: cookie
        )
    }

    /// The phone scanned `url` (or just its code): the code, once and within its 30 seconds, becomes a sign-in request
    /// of this customer's, shown with where the page was opened and answered like any other
    /// (``approve(_:keyID:counter:number:approvalHash:signature:appAttestAssertion:session:)``).
    func scanQRSignIn(_ url: String, session: AuthenticatedSession) async throws -> ApprovalInfo {
        try requireQRSignIn()
        guard let code = SignInCodeURL.code(in: url, origins: configuration.passkeys.origins) else {
            throw APIError(.qrCodeNotFound, "This is not a sign-in code of this bank.")
        }
        let policy = configuration.approvals
        return try await commit { db in
            guard let signIn = try await db.qrSignIns.find(codeHash: Self.tokenHash(code)) else {
                throw Refusal(
                    APIError(.qrCodeNotFound, "This is not a sign-in code of this bank, or it is too old. Scan the one the page shows now.")
                )
            }
            guard signIn.approvalID == nil else {
                throw Refusal(Self.qrCodeUsed)
            }
            guard signIn.expiresAt > now else {
                throw Refusal(APIError(.qrCodeNotFound, "This code is too old. Scan the one the page shows now."))
            }
            let approval = ApprovalInfo(
                id: newID(),
                accountID: session.accountID,
                kind: .signIn,
                clientID: nil,
                requester: configuration.passkeys.relyingPartyName,
                bindingMessage: nil,
                channel: signIn.channel,
                matchNumber: signIn.matchNumber,
                numberChoices: numberChoices(around: signIn.matchNumber),
                challenge: random.bytes(32),
                status: .pending,
                createdAt: now,
                expiresAt: now.addingTimeInterval(policy.lifetime),
                deliveryMode: .poll,
                pollInterval: 1
            )
            guard try await db.qrSignIns.markScanned(signIn.id, approval: approval.id, at: now.millisecondsSince1970) else {
                throw Refusal(Self.qrCodeUsed)
            }
            try await db.approvals.insert(approval, authRequestHash: nil)
            try await recorder.audit(
                .approvalRequested,
                succeeded: true,
                account: session.accountID,
                device: session.deviceID,
                session: session.sessionID,
                on: db
            )
            try await recorder.emit(.approvalRequested, .init(approval: approval), on: db)
            return approval
        }
    }

    /// What the page that showed QR code `id` learns, with the cookie set with it (`browserCookie`): a browser without it
    /// learns nothing (`qr_browser_mismatch`). Once approved, the first call starts the customer's session on
    /// `installationID` and hands over its tokens; later calls say `signed_in` without them.
    func qrSignInState(_ id: String, browserCookie: String?, installationID: String) async throws -> QRSignInState {
        try requireQRSignIn()
        _ = try Validation.installationID(installationID)
        // READ COMMITTED (TransactionIsolation): the page asks once a second; what it may change (the expiry, the
        // hand-over) are conditional updates whose result is checked.
        return try await commit(isolation: .readCommitted) { db in
            guard Validation.isIssuedID(id), let signIn = try await db.qrSignIns.find(id) else {
                throw Refusal(APIError(.qrCodeNotFound, "There is no such sign-in code."))
            }
            guard let browserCookie, Self.tokenHash(browserCookie) == signIn.browserHash else {
                throw Refusal(APIError(.qrBrowserMismatch, "This sign-in code belongs to the browser that showed it."))
            }
            guard let approvalID = signIn.approvalID else {
                return QRSignInState(status: signIn.expiresAt > now ? .waiting : .expired)
            }
            guard let approval = try await db.approvals.find(approvalID) else { throw APIError.internalError }
            switch approval.effective(at: now).status {
            case .pending: return QRSignInState(status: .scanned)
            case .denied: return QRSignInState(status: .denied)
            case .expired:
                if approval.status == .pending { try await recorder.expire(approval, on: db) }
                return QRSignInState(status: .expired)
            case .approved: break
            }
            // Collected already: signed in, but the tokens went to the first answer.
            return QRSignInState(status: .signedIn, tokens: try await handOver(approval, installationID: installationID, client: nil, on: db)?.tokens)
        }
    }
}

/// The browser and platform a `User-Agent` names, as a person would call them ("Chrome", "macOS"); empty when not known.
struct UserAgentSummary: Equatable {
    var browser = ""
    var platform = ""

    init(browser: String, platform: String) {
        self.browser = browser
        self.platform = platform
    }

    init(_ agent: String) {
        // The order matters: Edge and Opera say Chrome too, and Chrome says Safari.
        let browsers: [(String, String)] = [
            ("Edg/", "Edge"), ("OPR/", "Opera"), ("Firefox/", "Firefox"), ("HeadlessChrome/", "Chrome"), ("Chrome/", "Chrome"),
            ("CriOS/", "Chrome"), ("Safari/", "Safari"),
        ]
        browser = browsers.first { agent.contains($0.0) }?.1 ?? ""
        let platforms: [(String, String)] = [
            ("iPhone", "iOS"), ("iPad", "iPadOS"), ("Android", "Android"), ("Mac OS X", "macOS"), ("Macintosh", "macOS"),
            ("Windows", "Windows"), ("CrOS", "ChromeOS"), ("Linux", "Linux"),
        ]
        platform = platforms.first { agent.contains($0.0) }?.1 ?? ""
    }
}
