import AsyncHTTPClient
import BioAuthClient
import BioAuthCore
import BioAuthServer
import BioAuthTesting
import Foundation
import Logging
import OpenAPIRuntime

/// The BioAuth story, told step by step: a server in this process on loopback with a temporary SQLite
/// database, a Face ID phone and a Touch ID phone running the SDK. Every step checks what it tells; a step
/// that deviates is marked and the story goes on.
struct DemoStory {
    let language: Language
    let verbose: Bool

    var zh: Bool { language == .simplifiedChinese }
    func t(_ english: String, _ chinese: String) -> String { zh ? chinese : english }

    /// An id as the story shows it: its last 8 characters. A UUIDv7 begins with its timestamp, so the ids of one run
    /// share their first digits; the random end tells them apart.
    static func short(_ id: String) -> String { "…" + id.suffix(8) }

    /// A step did something else than told.
    struct Deviation: Error { let detail: String }

    func expect(_ condition: Bool, _ detail: @autoclosure () -> String) throws {
        if !condition { throw Deviation(detail: detail()) }
    }

    /// A simulated phone: sensor, keys, secure store, and the SDK.
    final class Phone: @unchecked Sendable {
        let name: String
        let sensor: SimulatedAuthenticator
        let keys: SoftwareDeviceKeyStore
        let store = InMemorySecureStore()
        let api: BioAuthAPI
        let clock = ManualClock()
        let signed = SignedLog()
        let language: Language
        let verbose: Bool
        var flows: BioAuthFlows!

        init(name: String, kind: BiometryKind, server: URL, language: Language, verbose: Bool) {
            self.name = name
            sensor = SimulatedAuthenticator(.init(kind: kind))
            keys = SoftwareDeviceKeyStore(authenticator: sensor)
            api = BioAuthAPI(serverURL: server, middlewares: verbose ? [HTTPTrace(phone: name)] : [])
            self.language = language
            self.verbose = verbose
        }

        /// The app starts (again): new flows over the same stores, as after a relaunch.
        func launch(active: Bool = true) async throws {
            let signed = self.signed
            let verbose = self.verbose
            flows = try await BioAuthFlows(
                api: api,
                authenticator: sensor,
                keyStore: keys,
                store: store,
                clock: clock,
                configuration: .init(
                    language: language,
                    deviceName: name,
                    gracePeriod: 30,
                    expectedRelyingPartyID: DemoStory.relyingPartyID,
                    observer: { event in
                        signed.record(event)
                        if verbose, case .signed(_, let payload, let signature) = event {
                            print(
                                "    ✎ \(payload.purpose) payload \(payload.bytes.count) bytes, counter \(payload.counter): \(payload.bytes.hex.prefix(48))…"
                            )
                            print("      signature \(signature.hex.prefix(32))…")
                        }
                    }
                ),
                isActive: active
            )
        }
    }

    /// The last signature a phone made, for the replay step.
    final class SignedLog: @unchecked Sendable {
        private let lock = NSLock()
        private var last: (challengeID: String, payload: SignedPayload, signature: Data)?
        func record(_ event: FlowEvent) {
            if case .signed(let challengeID, let payload, let signature) = event { lock.withLock { last = (challengeID, payload, signature) } }
        }
        var latest: (challengeID: String, payload: SignedPayload, signature: Data)? { lock.withLock { last } }
    }

    static let relyingPartyID = "bank.example"

    /// The story's steps, in order: each checks what it tells, and a step that deviates is marked and the story goes on.
    var steps: [DemoStep] {
        [
            DemoStep(title: t("Register, sign in with the password, and the offer", "注册、密码登录、提示开启"), run: registerAndOffer),
            DemoStep(
                title: t(
                    "Enable with the code the bank's branch gave Alice: a key behind Face ID, bound to her account",
                    "用银行网点交给 Alice 的绑定码启用：创建受面容 ID 保护的密钥并绑定到她的账户"
                ),
                run: enableFaceID
            ),
            DemoStep(
                title: t("Relaunch: locked until Face ID, which waits for the app to be active", "重新启动：应用锁定，待应用进入前台后用面容 ID 解锁"),
                run: relaunchLocked
            ),
            DemoStep(title: t("Sign out, then sign in with Face ID", "退出登录，再用面容 ID 登录"), run: signOutThenFaceID),
            DemoStep(title: t("A replayed signature is refused", "重放的签名被拒绝"), run: replayRefused),
            DemoStep(
                title: t(
                    "The bank's backend registers Coffee Shop, subscribes to webhooks and asks Alice for ¥88.00",
                    "银行后端登记 Coffee Shop、订阅 Webhook，并请求 Alice 支付 ¥88.00"
                ),
                run: bankRequestsPayment
            ),
            DemoStep(
                title: t(
                    "Pay ¥88.00 to Coffee Shop with Face ID; the receipt verifies; the bank's webhook arrives",
                    "用面容 ID 向 Coffee Shop 支付 ¥88.00；回执验证通过；银行收到 Webhook"
                ),
                run: payWithFaceID
            ),
            DemoStep(
                title: t(
                    "Changing the PIN asks for Face ID: a password session is refused (step_up_required), one prompt answers it",
                    "修改支付密码需要面容 ID：密码会话被拒绝（step_up_required），一次验证即可"
                ),
                run: changePINAsksForFaceID
            ),
            DemoStep(
                title: t(
                    "The call centre asks Alice to approve a higher limit on her iPhone; she approves with Face ID; the signed approval verifies",
                    "客服中心请求 Alice 在 iPhone 上确认提高限额；她用面容 ID 确认；签名确认书验证通过"
                ),
                run: callCentreApproval
            ),
            DemoStep(
                title: t(
                    "Web banking shows a QR code; Alice scans it with her iPhone, picks the page's number, and the page signs in",
                    "网上银行显示二维码；Alice 用 iPhone 扫码，选择页面上的数字，网页随即登录"
                ),
                run: scanToSignIn
            ),
            DemoStep(
                title: t(
                    "On the web: a password session adds no passkey, the scanned-in page does; it signs in with no username and pays nothing",
                    "网页端：密码会话不能添加通行密钥，扫码登录的网页可以；之后无需用户名即可登录；通行密钥不能付款"
                ),
                run: webPasskey
            ),
            DemoStep(
                title: t("Five non-matching faces lock Face ID; the passcode turns it back on", "五次面容不匹配导致锁定；输入设备密码后恢复"),
                run: lockoutAndPasscode
            ),
            DemoStep(title: t("Face ID fails at the till: the payment PIN pays", "付款时面容 ID 失败：使用支付密码付款"), run: payWithPIN),
            DemoStep(
                title: t(
                    "A phished password cannot bind a phone: the thief's is refused, and Alice's iPhone says no to its request",
                    "被钓鱼的密码无法绑定手机：窃贼的手机被拒绝，Alice 在 iPhone 上拒绝其绑定请求"
                ),
                run: phishedPassword
            ),
            DemoStep(
                title: t(
                    "The iPad is approved on the iPhone with the number it shows, then revoked from the iPhone: its Touch ID sign-in is refused",
                    "在 iPhone 上选择 iPad 显示的数字批准 iPad，随后在 iPhone 上撤销：iPad 的触控 ID 登录被拒绝"
                ),
                run: revokeIPad
            ),
            DemoStep(
                title: t(
                    "A face is added in Settings: Face ID sign-in turns off; the password alone cannot turn it on again, the bank's code does",
                    "在“设置”中添加面容：面容 ID 登录关闭；仅凭密码无法重新开启，凭银行的绑定码可以"
                ),
                run: enrollmentChanged
            ),
            DemoStep(
                title: t(
                    "Lost phone, new phone: the bank's recovery code binds the new iPhone; the old one's key is refused; the bank's webhook arrives",
                    "手机丢失，换新手机：银行的恢复码绑定新 iPhone；旧手机的密钥被拒绝；银行收到 Webhook"
                ),
                run: lostPhone
            ),
        ]
    }

    /// Tells the story: the stage set up, every step in order, then the stage taken down.
    func run() async -> DemoReport {
        var report = DemoReport(language: language)
        let stage: DemoStage
        do {
            stage = try await DemoStage.start(story: self)
        } catch {
            print(t("The server could not start: \(error)", "服务器无法启动：\(error)"))
            report.record(t("Start the server", "启动服务器"), passed: false, detail: "\(error)")
            return report
        }
        print(
            t(
                "BioAuth server on \(stage.server.url) (temporary SQLite database, relying party \(Self.relyingPartyID)).",
                "BioAuth 服务器运行于 \(stage.server.url)（临时 SQLite 数据库，依赖方 \(Self.relyingPartyID)）。"
            )
        )
        // The face phone's prompts are said the moment they show, so that in --verbose they come before the requests
        // they unlock.
        await stage.face.sensor.onPresent { prompt in print("  📱 “\(prompt.reason)”") }
        for step in steps {
            print("\n▶ \(step.title)")
            do {
                report.record(step.title, passed: true, detail: try await step.run(stage))
            } catch let deviation as Deviation {
                print("  ✗ \(deviation.detail)")
                report.record(step.title, passed: false, detail: deviation.detail)
            } catch {
                print("  ✗ \(error)")
                report.record(step.title, passed: false, detail: "\(error)")
            }
        }
        await stage.stop()
        return report
    }

    /// A line of the story, in the story's language.
    func say(_ english: String, _ chinese: String) { print("  " + t(english, chinese)) }

    /// A biometric failure as the user would read it.
    func failure(_ error: BiometricError, _ kind: BiometryKind) { print("  ⚠︎ \(error.message(in: language, biometry: kind))") }
}

/// One step of the story: its title, and what it does on the stage (returning what it showed).
struct DemoStep {
    let title: String
    let run: (DemoStage) async throws -> String
}

/// What every step plays on: the server (in this process, on loopback, over a temporary SQLite file), the bank's webhook
/// receiver and backend, the call centre's client, Alice's two phones and a thief's, and what one step leaves for a later
/// one.
final class DemoStage: @unchecked Sendable {
    let folder: URL
    let server: LoopbackServer
    let receiver: LoopbackWebhookReceiver
    let bank: BankBackend
    let callCentre: ServiceClients.Credentials?
    let face: DemoStory.Phone
    let touch: DemoStory.Phone
    /// A phone that is not Alice's, in the hands of someone who phished her password.
    let thief: DemoStory.Phone
    /// The phone Alice buys when she loses her iPhone.
    let replacement: DemoStory.Phone
    let password = "correct horse battery"
    let pin = "258046"
    /// The bank's service token, once it has one.
    var bankToken = ""
    /// The web page's session, signed in by scanning its QR code with the iPhone.
    var webToken = ""
    /// The payment the bank asked for.
    var coffeeID = ""

    private init(
        folder: URL,
        server: LoopbackServer,
        receiver: LoopbackWebhookReceiver,
        bank: BankBackend,
        callCentre: ServiceClients.Credentials?,
        face: DemoStory.Phone,
        touch: DemoStory.Phone,
        thief: DemoStory.Phone,
        replacement: DemoStory.Phone
    ) {
        self.folder = folder
        self.server = server
        self.receiver = receiver
        self.bank = bank
        self.callCentre = callCentre
        self.face = face
        self.touch = touch
        self.thief = thief
        self.replacement = replacement
    }

    /// Starts the server and the receiver, makes the bank's credentials, and sets up the phones.
    static func start(story: DemoStory) async throws -> DemoStage {
        let t = story.t
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bioauth-demo-\(UUID().uuidString)")
        let server: LoopbackServer
        let receiver: LoopbackWebhookReceiver
        var credentials: ServiceClients.Credentials?
        var callCentre: ServiceClients.Credentials?
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            var configuration = ServerConfiguration()
            configuration.databasePath = folder.appendingPathComponent("bioauth.sqlite").path
            configuration.receiptKeyPath = folder.appendingPathComponent("receipt-key.pem").path
            configuration.pinKeyPath = folder.appendingPathComponent("pin-key").path
            configuration.relyingPartyID = DemoStory.relyingPartyID
            configuration.bcryptCost = 10
            configuration.webhooks.pollInterval = 0.2
            // The bank's webhook receiver listens on this machine: a destination the server refuses unless it is allowed.
            configuration.outbound.allowed = ["127.0.0.1"]
            // Passkeys for the bank's web site (the demo's browser is a software authenticator).
            configuration.passkeys.origins = ["https://" + DemoStory.relyingPartyID]
            // The web sign-in page's QR codes (the demo plays the page over HTTP, with its cookie).
            configuration.passkeys.webPageEnabled = true
            configuration.passkeys.relyingPartyName = "Web Banking"
            var logger = Logger(label: "bioauth-demo")
            logger.logLevel = .error  // --verbose traces the phones' side: their HTTP calls and signatures
            // The bank's webhook receiver, which checks every delivery's signature.
            receiver = try await LoopbackWebhookReceiver.start()
            server = try await LoopbackServer.start(configuration: configuration, logger: logger) { database in
                // The operator makes the backend's credentials (what `bioauth admin service create` does).
                credentials = try await ServiceClients(database: database).create(
                    name: "core-banking",
                    scopes: ["payees:write", "payments:write", "webhooks:write", "sessions:introspect", "bindings:write"]
                )
                // The call centre asks customers to approve on their phone (OpenID CIBA), under the name the phone shows.
                let clients = ServiceClients(database: database)
                callCentre = try await clients.create(name: "call-centre", scopes: ["approvals:write"])
                try await clients.setDisplayName(clientID: callCentre!.clientID, to: "Bank Call Centre")
            }
        } catch {
            try? FileManager.default.removeItem(at: folder)
            throw error
        }
        func phone(_ english: String, _ chinese: String, _ kind: BiometryKind) -> DemoStory.Phone {
            DemoStory.Phone(name: t(english, chinese), kind: kind, server: server.url, language: story.language, verbose: story.verbose)
        }
        return DemoStage(
            folder: folder,
            server: server,
            receiver: receiver,
            bank: BankBackend(server: server.url, credentials: try credentials.orThrow("no backend credentials"), http: .shared),
            callCentre: callCentre,
            face: phone("Alice's iPhone (Face ID)", "Alice 的 iPhone（面容 ID）", .faceID),
            touch: phone("Alice's iPad (Touch ID)", "Alice 的 iPad（触控 ID）", .touchID),
            thief: phone("A thief's iPhone (Face ID)", "窃贼的 iPhone（面容 ID）", .faceID),
            replacement: phone("Alice's new iPhone (Face ID)", "Alice 的新 iPhone（面容 ID）", .faceID)
        )
    }

    /// Stops the server and the receiver and deletes the temporary folder.
    func stop() async {
        await server.stop()
        await receiver.stop()
        try? FileManager.default.removeItem(at: folder)
    }
}

extension Optional {
    /// The value, or a deviation saying `detail`.
    func orThrow(_ detail: String) throws -> Wrapped {
        guard let self else { throw DemoStory.Deviation(detail: detail) }
        return self
    }
}

extension Data {
    var hex: String { map { String(format: "%02x", $0) }.joined() }
}
