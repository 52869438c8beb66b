import ArgumentParser
import BioAuthClient
import BioAuthCore
import BioAuthTesting
import Foundation
import Logging
import Testing

@testable import BioAuthServer
@testable import bioauth

@Suite("bioauth admin")
struct AdminCommandTests {
    /// The path of a SQLite database in `folder` (made here) where alice signed in once, with an access and a refresh
    /// token.
    static func databaseWithOneSignIn(in folder: URL) async throws -> String {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let database = folder.appendingPathComponent("bioauth.sqlite").path
        let server = try await LoopbackServer.start(configuration: .forTests(database: database), logger: Logger(label: "test"))
        let api = BioAuthAPI(serverURL: server.url)
        _ = try await api.createAccount(username: "alice", password: "correct horse")
        _ = try await api.signIn(username: "alice", password: "correct horse", installationID: "phone-1")
        await server.stop()
        return database
    }

    @Test("purge --dry-run shows what would go and deletes nothing; purge deletes it; retention flags and the environment apply")
    func purge() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("admin-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = try await Self.databaseWithOneSignIn(in: folder)

        // 40 days on: the access token expired 40 days ago (over the 30 kept); the refresh token only 10 days ago.
        let later = ManualClock(start: Date().addingTimeInterval(40 * 86_400))
        let dryRun = try PurgeCommand.parse(["--database", database, "--dry-run"])
        let planned = try await dryRun.execute(environment: [:], clock: later)
        #expect(planned.contains("would delete:"))
        #expect(
            planned.contains("access_tokens      1") && planned.contains("refresh_tokens     0") && planned.contains("total              1"),
            "\(planned)"
        )
        #expect(try await dryRun.execute(environment: [:], clock: later) == planned, "a dry run deletes nothing")

        // The environment's retention applies where no option is given: refresh tokens kept 5 days go too.
        let shorter = try await dryRun.execute(environment: ["BIOAUTH_TOKEN_RETENTION_DAYS": "5"], clock: later)
        #expect(shorter.contains("refresh_tokens     1"), "\(shorter)")
        let flag = try PurgeCommand.parse(["--database", database, "--dry-run", "--token-retention-days", "50"])
        #expect(try await flag.execute(environment: ["BIOAUTH_TOKEN_RETENTION_DAYS": "5"], clock: later).contains("total              0"))

        let purged = try await PurgeCommand.parse(["--database", database]).execute(environment: [:], clock: later)
        #expect(purged.contains("deleted:") && purged.contains("access_tokens      1"), "\(purged)")
        #expect(try await dryRun.execute(environment: [:], clock: later).contains("total              0"))
    }

    @Test("purge while another instance holds the lease deletes nothing and exits 75, so a scheduler sees it did not run")
    func purgeWhileBusy() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("admin-busy-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = try await Self.databaseWithOneSignIn(in: folder)

        // Another instance holds the purge's lease, now (run() reads the system clock) and 40 days on, when the access
        // token is due.
        let later = ManualClock(start: Date().addingTimeInterval(40 * 86_400))
        let executor = try await openDatabase(database, logger: Logger(label: "test"))
        let now = Date().millisecondsSince1970
        let until = later.now.millisecondsSince1970 + 600_000
        let claimed = try await executor.transaction { db in
            try await db.maintenanceLeases.claim(Retention.leaseName, holder: "other-instance", now: now, until: until)
        }
        try await executor.close()
        #expect(claimed)

        let due = try await PurgeCommand.parse(["--database", database, "--dry-run"]).execute(environment: [:], clock: later)
        #expect(due.contains("access_tokens      1"), "a dry run takes no lease: \(due)")
        let purge = try PurgeCommand.parse(["--database", database])
        await #expect(throws: PurgeCommand.Busy.self) { try await purge.execute(environment: [:], clock: later) }
        await #expect(throws: ExitCode(75)) { try await purge.run() }
        let after = try await PurgeCommand.parse(["--database", database, "--dry-run"]).execute(environment: [:], clock: later)
        #expect(after == due, "nothing was deleted")
    }

    @Test("receipt-key rotate replaces the key file, says which key retired, and a served server publishes both")
    func rotateReceiptKey() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("admin-rotate-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = folder.appendingPathComponent("bioauth.sqlite").path
        let keyPath = folder.appendingPathComponent("receipt-key.pem").path
        let environment = ["BIOAUTH_DATABASE": database, "BIOAUTH_RECEIPT_KEY": keyPath]
        let missing = try RotateReceiptKeyCommand.parse([])
        await #expect(throws: (any Error).self) { try await missing.execute(environment: environment) }

        var configuration = ServerConfiguration.forTests(database: database)
        configuration.receiptKeyPath = keyPath
        let first = try await LoopbackServer.start(configuration: configuration, logger: Logger(label: "test"))
        let before = try await BioAuthAPI(serverURL: first.url).receiptKeys()
        await first.stop()
        let oldFile = try String(contentsOfFile: keyPath, encoding: .utf8)

        let output = try await RotateReceiptKeyCommand.parse([]).execute(environment: environment)
        #expect(output.contains("retired receipt key \(Base64URL.encode(try #require(before.first).keyID))"), "\(output)")
        #expect(try String(contentsOfFile: keyPath, encoding: .utf8) != oldFile)
        let attributes = try FileManager.default.attributesOfItem(atPath: keyPath)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600, "the new key file is owner-only")

        let second = try await LoopbackServer.start(configuration: configuration, logger: Logger(label: "test"))
        let after = try await BioAuthAPI(serverURL: second.url).receiptKeys()
        await second.stop()
        #expect(after.count == 2 && after.first == before.first)
    }

    @Test("service create prints the secret once; list, rotate-secret, finish-rotation and disable manage the client")
    func serviceClients() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("admin-service-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let environment = ["BIOAUTH_DATABASE": folder.appendingPathComponent("bioauth.sqlite").path]
        let created = try await ServiceCommand.Create.parse(["core-banking", "--scope", "sessions:introspect"]).execute(environment: environment)
        let lines = created.split(separator: "\n")
        let clientID = try #require(lines.first?.split(separator: " ").last.map(String.init))
        let secret = try #require(lines.dropFirst().first?.split(separator: " ").last.map(String.init))
        #expect(clientID.hasPrefix("svc_") && secret.count == 43, "\(created)")

        // --json, for scripts: one object with the id and the secret.
        let scripted = try await ServiceCommand.Create.parse(["batch-jobs", "--scope", "payees:write", "--json"]).execute(environment: environment)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(scripted.utf8)) as? [String: String], "\(scripted)")
        #expect(
            Set(object.keys) == ["client_id", "client_secret"] && object["client_id"]?.hasPrefix("svc_") == true
                && object["client_secret"]?.count == 43
        )
        let rotatedJSON = try await ServiceCommand.RotateSecret.parse([try #require(object["client_id"]), "--json"]).execute(environment: environment)
        #expect((try JSONSerialization.jsonObject(with: Data(rotatedJSON.utf8)) as? [String: String])?["client_secret"]?.count == 43)

        let listed = try await ServiceCommand.List.parse([]).execute(environment: environment).split(separator: "\n").first.map(String.init)
        #expect(listed == "\(clientID)  core-banking  active  sessions:introspect")
        #expect(listed?.contains(secret) == false)
        // The name customers' phones show for the client's approval requests: checked like a payee's name.
        let named = try await ServiceCommand.DisplayName.parse([clientID, "Bank Call Centre"]).execute(environment: environment)
        #expect(named == "\(clientID)'s approval requests show \"Bank Call Centre\"")
        let spoofed = try ServiceCommand.DisplayName.parse([clientID, "B\u{0430}nk Call Centre"])
        let spoofError = await #expect(throws: (any Error).self) { try await spoofed.execute(environment: environment) }
        #expect(spoofError.map { "\($0)".contains("mixes scripts") } == true, "a Cyrillic a among Latin letters")
        let pinged = try await ServiceCommand.NotificationEndpoint.parse([clientID, "https://bank.example/ciba"]).execute(environment: environment)
        #expect(pinged == "\(clientID) is pinged at https://bank.example/ciba (CIBA ping mode)")
        #expect(
            try await ServiceCommand.NotificationEndpoint.parse([clientID]).execute(environment: environment) == "\(clientID) polls (CIBA poll mode)"
        )
        let plainHTTP = try ServiceCommand.NotificationEndpoint.parse([clientID, "http://bank.example/ciba"])
        await #expect(throws: (any Error).self) { try await plainHTTP.execute(environment: environment) }
        let unknownClient = try ServiceCommand.DisplayName.parse(["svc_nobody", "Bank"])
        await #expect(throws: (any Error).self) { try await unknownClient.execute(environment: environment) }
        let rotated = try await ServiceCommand.RotateSecret.parse([clientID]).execute(environment: environment)
        #expect(rotated.contains("new client_secret:") && !rotated.contains(secret))
        #expect(try await ServiceCommand.List.parse([]).execute(environment: environment).contains("rotating"))
        _ = try await ServiceCommand.FinishRotation.parse([clientID]).execute(environment: environment)
        _ = try await ServiceCommand.Disable.parse([clientID]).execute(environment: environment)
        #expect(try await ServiceCommand.List.parse([]).execute(environment: environment).contains("disabled"))
        // The same database found through a config file, as bioauth serve would find it.
        let config = folder.appendingPathComponent("bioauth.json").path
        try #"{"database": "\#(try #require(environment["BIOAUTH_DATABASE"]))"}"#.write(toFile: config, atomically: true, encoding: .utf8)
        #expect(try await ServiceCommand.List.parse(["--config", config]).execute(environment: [:]).contains(clientID))

        let unknownScope = try ServiceCommand.Create.parse(["other", "--scope", "root"])
        let error = await #expect(throws: (any Error).self) { try await unknownScope.execute(environment: environment) }
        #expect(error.map { "\($0)".contains("unknown scope root") } == true)
    }

    @Test("payee register records the bank's name (NFC), updates it, refuses a look-alike, and list shows them")
    func payees() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("admin-payee-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let environment = ["BIOAUTH_DATABASE": folder.appendingPathComponent("bioauth.sqlite").path]
        let first = try await PayeeCommand.Register.parse(["cafe-1", "--name", "Cafe\u{0301} Zoe\u{0308}"]).execute(environment: environment)
        #expect(first == "cafe-1: registered as \"Caf\u{00E9} Zo\u{00EB}\" (verified)")
        let renamed = try await PayeeCommand.Register.parse(["cafe-1", "--name", "Café Zoë", "--unverified"]).execute(environment: environment)
        #expect(renamed == "cafe-1: updated as \"Café Zoë\" (unverified)")
        let lookalike = try PayeeCommand.Register.parse(["shop-1", "--name", "Соffee Shop"])
        let error = await #expect(throws: (any Error).self) { try await lookalike.execute(environment: environment) }
        #expect(error.map { "\($0)".contains("name") } == true, "\(String(describing: error))")
        // An operator's rename is held to the same rule as a registration: never onto another payee's look.
        _ = try await PayeeCommand.Register.parse(["shop-2", "--name", "Tea House"]).execute(environment: environment)
        let onto = try PayeeCommand.Register.parse(["shop-2", "--name", "CAFÉ ZOË"])
        let taken = await #expect(throws: (any Error).self) { try await onto.execute(environment: environment) }
        #expect(taken.map { "\($0)".contains("looks like the registered name of payee cafe-1") } == true, "\(String(describing: taken))")
        #expect(
            try await PayeeCommand.List.parse([]).execute(environment: environment)
                == "cafe-1  \"Café Zoë\"  unverified  by admin\nshop-2  \"Tea House\"  verified  by admin"
        )
    }

    @Test(
        "operator create reads the password from standard input; list shows the role and the sign-in state; an admin changes a role, resets password and second factor, disables and enables, each with a reason; bad input is a usage error"
    )
    func operators() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("admin-operator-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let environment = ["BIOAUTH_DATABASE": folder.appendingPathComponent("bioauth.sqlite").path, "BIOAUTH_BCRYPT_COST": "4"]
        let made = try await OperatorCommand.Create.parse(["mei", "--role", "admin"]).execute(
            password: "correct horse battery",
            environment: environment
        )
        #expect(made.hasPrefix("op_") && made.contains("operator mei (admin)"), "\(made)")
        let listed = try await OperatorCommand.List.parse([]).execute(environment: environment)
        #expect(listed.hasSuffix("mei  admin  password not yet chosen") && !listed.contains("correct horse"), "\(listed)")
        let own = try await OperatorCommand.Create.parse(["ada", "--role", "admin", "--own-password"]).execute(
            password: "ada's own password",
            environment: environment
        )
        #expect(own.contains("the TOTP second factor is enrolled"), "\(own)")
        #expect(try await OperatorCommand.List.parse([]).execute(environment: environment).contains("ada  admin  TOTP not enrolled"))
        // An admin's changes of another operator, each with who and why.
        let who = ["--operator", "ada", "--reason", "ticket 4711"]
        #expect(try await OperatorCommand.SetRole.parse(["mei", "--role", "support"] + who).execute(environment: environment) == "mei: support")
        let reset = try await OperatorCommand.ResetPassword.parse(["mei"] + who).execute(password: "temporary password", environment: environment)
        #expect(reset.contains("password reset"))
        #expect(try await OperatorCommand.ResetTOTP.parse(["mei"] + who).execute(environment: environment).contains("second factor reset"))
        let notAdmin = await #expect(throws: (any Error).self) {
            try await OperatorCommand.ResetTOTP.parse(["ada", "--operator", "mei", "--reason", "x"]).execute(environment: environment)
        }
        #expect(notAdmin.map { "\($0)".contains("only admins") } == true, "\(String(describing: notAdmin))")
        await #expect(throws: (any Error).self, "a reason is required") {
            try await OperatorCommand.Enable.parse(["mei", "--operator", "ada", "--reason", " "]).execute(environment: environment)
        }
        #expect(throws: (any Error).self) { try OperatorCommand.Create.parse(["li", "--role", "root"]) }
        let short = try OperatorCommand.Create.parse(["li", "--role", "viewer"])
        let error = await #expect(throws: (any Error).self) { try await short.execute(password: "short", environment: environment) }
        #expect(error.map { "\($0)".contains("at least 12 characters") } == true)
        await #expect(throws: (any Error).self) { try await short.execute(password: nil, environment: environment) }
        #expect(try await OperatorCommand.Disable.parse(["mei"] + who).execute(environment: environment) == "mei: disabled")
        #expect(try await OperatorCommand.List.parse([]).execute(environment: environment).hasSuffix("mei  support  disabled"))
        #expect(try await OperatorCommand.Enable.parse(["mei"] + who).execute(environment: environment) == "mei: enabled")
    }

    @Test("every change bioauth admin makes is audited once, by bioauth-admin: operators appear in the console's \"Changes to operators\"")
    func commandLineAudited() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("admin-audit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = folder.appendingPathComponent("bioauth.sqlite").path
        let environment = ["BIOAUTH_DATABASE": database, "BIOAUTH_BCRYPT_COST": "4"]
        _ = try await OperatorCommand.Create.parse(["mei", "--role", "admin"]).execute(password: "correct horse battery", environment: environment)
        let created = try await ServiceCommand.Create.parse(["core-banking", "--scope", "approvals:write", "--json"]).execute(
            environment: environment
        )
        let clientID = try #require(
            (try JSONSerialization.jsonObject(with: Data(created.utf8)) as? [String: Any])?["client_id"] as? String
        )
        _ = try await ServiceCommand.DisplayName.parse([clientID, "Bank Call Centre"]).execute(environment: environment)
        _ = try await ServiceCommand.NotificationEndpoint.parse([clientID, "https://bank.example/ciba"]).execute(environment: environment)
        _ = try await ServiceCommand.RotateSecret.parse([clientID]).execute(environment: environment)
        _ = try await ServiceCommand.FinishRotation.parse([clientID]).execute(environment: environment)
        _ = try await ServiceCommand.Disable.parse([clientID]).execute(environment: environment)
        _ = try await PayeeCommand.Register.parse(["cafe-1", "--name", "Cafe Zoe"]).execute(environment: environment)

        let executor = try await openDatabase(database, logger: Logger(label: "test"))
        let desk = try await SupportDesk.open(database: executor, configuration: .forTests(database: database))
        let changes = try await desk.operatorChanges()
        #expect(changes.map(\.kind) == ["operator_created"] && changes[0].operatorID == "bioauth-admin", "\(changes)")
        #expect(changes[0].reason.hasPrefix("op_") && changes[0].reason.hasSuffix(" admin"), "\(changes)")
        let events = try await executor.transaction { db in
            try await db.select().columns("kind", "operator_id", "client_id").from("audit_events").orderBy("sequence").all().map {
                (try $0.decode(column: "kind", as: String.self), try $0.decode(column: "operator_id", as: String?.self))
            }
        }
        try await executor.close()
        #expect(
            events.map(\.0) == [
                "operator_created", "service_client_created", "service_client_changed", "service_client_changed", "service_client_changed",
                "service_client_changed", "service_client_disabled", "payee_registered",
            ],
            "\(events)"
        )
        #expect(events.allSatisfy { $0.1 == "bioauth-admin" }, "\(events)")
    }

    @Test("customer show prints the account, devices and timeline; unlock by an operator with a reason is in the timeline; a viewer is refused")
    func customerSupport() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("admin-customer-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = folder.appendingPathComponent("bioauth.sqlite").path
        let environment = ["BIOAUTH_DATABASE": database, "BIOAUTH_BCRYPT_COST": "4"]
        let configuration = ServerConfiguration.forTests(database: database)
        let server = try await LoopbackServer.start(configuration: configuration, logger: Logger(label: "test"))
        let api = BioAuthAPI(serverURL: server.url)
        let account = try await api.createAccount(username: "alice", password: "correct horse")
        for _ in 0..<5 { _ = try? await api.signIn(username: "alice", password: "wrong", installationID: "p") }
        await server.stop()
        _ = try await OperatorCommand.Create.parse(["mei", "--role", "support"]).execute(password: "correct horse battery", environment: environment)
        _ = try await OperatorCommand.Create.parse(["vic", "--role", "viewer"]).execute(password: "correct horse battery", environment: environment)

        #expect(try await CustomerCommand.Find.parse(["ALI"]).execute(environment: environment) == "\(account.id)  alice", "any case, by prefix")
        #expect(try await CustomerCommand.Find.parse([account.id.uppercased()]).execute(environment: environment).hasPrefix(account.id))
        await #expect(throws: (any Error).self) { try await CustomerCommand.Find.parse(["bob"]).execute(environment: environment) }
        let shown = try await CustomerCommand.Show.parse(["Alice"]).execute(environment: environment)
        #expect(shown.hasPrefix("alice  \(account.id)") && shown.contains("password: locked until") && shown.contains("account_locked"), "\(shown)")
        let viewer = try CustomerCommand.Unlock.parse(["alice", "--operator", "vic", "--reason", "checked"])
        let error = await #expect(throws: (any Error).self) { try await viewer.execute(environment: environment) }
        #expect(error.map { "\($0)".contains("viewers only read") } == true)
        #expect(throws: (any Error).self, "a reason is required") { try CustomerCommand.Unlock.parse(["alice", "--operator", "mei"]) }
        let unlocked = try await CustomerCommand.Unlock.parse(["alice", "--operator", "mei", "--reason", "Identity checked on call 4712"])
            .execute(environment: environment)
        #expect(unlocked == "alice: unlocked")
        // A recovery starts only as a code handed to the bank's identity check: audited with the operator and reason.
        let handed = try await CustomerCommand.Code.parse(["recovery", "alice", "--operator", "mei", "--reason", "ID checked at branch 12"])
            .execute(environment: environment)
        let code = try #require(handed.split(separator: "\n").first.map(String.init))
        #expect(code.count == 29 && handed.contains("recovery code for alice"), "\(handed)")
        #expect(throws: (any Error).self, "only bind, recovery or password-reset") {
            try CustomerCommand.Code.parse(["unlock-everything", "alice", "--operator", "mei", "--reason", "x"])
        }
        let after = try await CustomerCommand.Show.parse([account.id]).execute(environment: environment)
        #expect(
            after.contains("password: not locked") && after.contains("account_unlocked  success  by op_")
                && after.contains("Identity checked on call 4712") && after.contains("binding_code_issued") && !after.contains(code),
            "\(after)"
        )
    }

    @Test("a bad retention value stops the command with a message naming it")
    func badValue() async throws {
        let command = try PurgeCommand.parse(["--database", ":memory:", "--audit-retention-days", "0"])
        await #expect(throws: (any Error).self) { try await command.execute(environment: [:]) }
        do {
            _ = try await command.execute(environment: [:])
        } catch {
            #expect("\(error)".contains("audit retention must be at least 1 day"))
        }
        let rest = try PurgeCommand.parse(["--database", ":memory:", "--retention-batch-rest", "11"])
        await #expect {
            try await rest.execute(environment: [:])
        } throws: { error in
            "\(error)".contains("retention batch rest must be 0-10")
        }
        let size = try PurgeCommand.parse(["--database", ":memory:", "--retention-batch-size", "9"])
        await #expect {
            try await size.execute(environment: [:])
        } throws: { error in
            "\(error)".contains("retention batch size must be 10-10000 rows")
        }
        let words = try PurgeCommand.parse(["--database", ":memory:", "--retention-batch-size", "many"])
        await #expect {
            try await words.execute(environment: [:])
        } throws: { error in
            "\(error)".contains("--retention-batch-size") && "\(error)".contains("must be a whole number")
        }
        let noRest = try PurgeCommand.parse(["--database", ":memory:", "--retention-batch-rest", "0"])
        #expect(try await noRest.execute(environment: [:]).contains("total"), "an operator clearing a backlog may purge without resting")
    }

    @Test("the purge's help gives the ranges its checks enforce and the policy's defaults")
    func batchRangesInHelp() {
        let help = PurgeCommand.helpMessage(columns: 1000)
        #expect(help.contains("as a multiple of the batch's time, 0-10 (default 2; 0: no rest)"), "\(help)")
        #expect(help.contains("Rows a purge deletes per batch, 10-10000 (default 50 on PostgreSQL, 10 on SQLite;"), "\(help)")
        for text in ["ended (default 30).", "kept (default 2557, 7 years;", "at least 1 (default 24).", "ended, at least 1 (default 30)."] {
            #expect(help.contains(text), "the policy's default: \(text)\n\(help)")
        }
    }
}
