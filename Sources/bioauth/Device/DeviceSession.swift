import BioAuthClient
import BioAuthCore
import BioAuthTesting
import Foundation

/// Runs `bioauth device` commands against a ``SimulatedPhone``. One instance is one run of the app: the
/// "unlocked" part of the session lives only as long as it does, as in a real app.
final class DeviceSession: @unchecked Sendable {
    let phone: SimulatedPhone
    /// Where output goes.
    let write: @Sendable (String) -> Void
    /// Asks the person at the keyboard what they do at a prompt; `nil` (no input) cancels it.
    let ask: @Sendable (String) -> String?

    init(phone: SimulatedPhone, write: @escaping @Sendable (String) -> Void, ask: @escaping @Sendable (String) -> String?) {
        self.phone = phone
        self.write = write
        self.ask = ask
    }

    static let help = """
        Commands (the phone's state is kept in its folder between runs):
          status                             where the session, biometric sign-in and the sensor stand
          signup USER PASSWORD               register an account
          signin USER PASSWORD               password sign-in (then enable-biometrics or later)
          enable-biometrics [BINDING_CODE] | later
                                             answer the offer: 启用 / 稍后 (a second phone needs the bank's code...
          bind-by-approval                   ...or the first phone's approval: shows a number, waits for it)
          biometric-signin                   sign in with Face ID / Touch ID
          unlock | recover                   unlock the locked app | enter the passcode after a lockout
          touch match|nomatch|cancel|fallback|passcode
                                             what the user does at the next prompt (else you are asked)
          relaunch | background | foreground [SECONDS_AWAY]
          change-enrollment                  add a face or finger in Settings (invalidates the key)
          set-pin PIN PASSWORD               set the 6-digit payment PIN
          new-payment AMOUNT_MINOR CURRENCY PAYEE_ID
                                             pay a payee the bank registered (its registered name is shown)
          pending                            the payments waiting for you: yours and the bank's requests
          pay PAYMENT_ID | pay-pin PAYMENT_ID PIN
          approvals                          requests to approve what started elsewhere (the call centre, a web page)
          scan URL                           open a web page's sign-in QR code (what the camera read)
          approve APPROVAL_ID [NUMBER] | deny APPROVAL_ID
                                             answer a request; a sign-in needs the number its page or channel shows
          devices | revoke DEVICE_ID | disable-biometrics | signout
          help | quit
        """

    /// Runs one command line; returns 0 when it did what it says, 1 when it was refused, 2 for a usage error.
    func run(_ words: [String]) async -> Int32 {
        guard let command = words.first else { return 0 }
        let arguments = Array(words.dropFirst())
        do {
            try await perform(command, arguments)
            try await phone.save()
            return 0
        } catch let error as DeviceCommandError {
            write("usage: \(error)")
            return 2
        } catch {
            try? await phone.save()
            write("✗ " + describe(error, biometry: await phone.sensor.kind))
            return 1
        }
    }

    private func perform(_ command: String, _ arguments: [String]) async throws {
        let flows = phone.flows!
        let sensor = phone.sensor
        let language = phone.language
        func require(_ count: Int, _ usage: String) throws {
            guard arguments.count >= count else { throw DeviceCommandError.usage(usage) }
        }
        switch command {
        case "help":
            write(Self.help)
        case "status":
            try await status()
        case "signup":
            try require(2, "signup USER PASSWORD")
            let account = try await flows.createAccount(username: arguments[0], password: arguments[1])
            write("✓ account \(account.username) created")
        case "signin":
            try require(2, "signin USER PASSWORD")
            if let offer = try await flows.signIn(username: arguments[0], password: arguments[1]) {
                write(
                    "✓ signed in\n💬 \(offer.title) \(offer.message)\n   → enable-biometrics [\(offer.enableButton)] or later [\(offer.laterButton)]"
                )
            } else {
                write("✓ signed in")
            }
        case "enable-biometrics":
            if let code = arguments.first {
                try await prompting { try await flows.enableBiometricSignIn(bindingCode: code) }
            } else {
                try await prompting { try await flows.enableBiometricSignIn() }
            }
            write("✓ biometric sign-in is on; this phone is bound to the account")
        case "bind-by-approval":
            let pending = try await prompting { try await flows.requestDeviceBinding() }
            write("… approve on your other phone and pick \(pending.matchNumber) (until \(pending.expiresAt.formatted(.iso8601)))")
            try await flows.completeDeviceBinding(pending)
            write("✓ approved on the other phone; biometric sign-in is on and this phone is bound")
        case "later":
            try await flows.declineBiometricSignIn()
            write("✓ not now (asked again after the next password sign-in)")
        case "biometric-signin":
            try await prompting { try await flows.signInWithBiometrics() }
            write("✓ signed in with biometrics")
        case "unlock":
            let state = try await prompting { try await flows.unlock() }
            write(state == .unlocked ? "✓ unlocked" : "nothing to unlock: \(state.rawValue)")
        case "recover":
            try await prompting { try await flows.recoverFromLockout() }
            write("✓ passcode accepted; biometrics work again (now: unlock)")
        case "touch":
            try require(1, "touch match|nomatch|cancel|fallback|passcode")
            guard let outcome = Self.outcome(arguments[0]) else { throw DeviceCommandError.usage("touch match|nomatch|cancel|fallback|passcode") }
            await sensor.script(outcome)
            write("✓ next prompt: \(outcome.rawValue)")
        case "relaunch":
            try await phone.launch()
            write("✓ relaunched: \(await phone.flows.snapshot.state.rawValue)")
        case "background":
            await flows.appLock.didEnterBackground()
            phone.settings.backgroundedAt = phone.clock.now
            write("✓ in the background")
        case "foreground":
            let away = try arguments.first.map { text -> TimeInterval in
                guard let seconds = TimeInterval(text), seconds >= 0 else { throw DeviceCommandError.usage("foreground [SECONDS_AWAY]") }
                return seconds
            }
            if let backgroundedAt = phone.settings.backgroundedAt {
                phone.clock.set(backgroundedAt)
                await flows.appLock.didEnterBackground()
                phone.clock.set(backgroundedAt.addingTimeInterval(away ?? Date().timeIntervalSince(backgroundedAt)))
            }
            let state = try await flows.appLock.willEnterForeground()
            await flows.appLock.didBecomeActive()
            phone.settings.backgroundedAt = nil
            write("✓ in the foreground: \(state.rawValue)")
        case "change-enrollment":
            await sensor.changeEnrollment()
            write("✓ a face or finger was added in Settings; keys made before are invalidated")
        case "set-pin":
            try require(2, "set-pin PIN PASSWORD")
            try await flows.setPaymentPIN(arguments[0], currentPassword: arguments[1])
            write("✓ payment PIN set (stored on the server as a bcrypt hash only)")
        case "new-payment":
            try require(3, "new-payment AMOUNT_MINOR CURRENCY PAYEE_ID")
            guard arguments.count == 3, let minor = Int64(arguments[0]), let currency = Currency(code: arguments[1]) else {
                throw DeviceCommandError.usage("new-payment AMOUNT_MINOR CURRENCY PAYEE_ID (e.g. 8800 CNY coffee-1)")
            }
            let payment = try await phone.api.createPayment(
                amount: Money(minorUnits: minor, currency: currency),
                payeeID: arguments[2],
                idempotencyKey: UUID().uuidString,
                accessToken: try await flows.accessToken()
            )
            write(
                "✓ payment \(payment.id): \(PromptCopy(language: language).amount(payment.amount)) to \(payment.payeeName), pending until \(payment.expiresAt)"
            )
        case "pending":
            let pending = try await phone.api.payments(status: "pending", accessToken: try await flows.accessToken())
            if pending.isEmpty { write("no payments waiting") }
            for payment in pending {
                write("  \(payment.id)  \(PromptCopy(language: language).amount(payment.amount)) to \(payment.payeeName)  until \(payment.expiresAt)")
            }
        case "pay":
            try require(1, "pay PAYMENT_ID")
            let paid = try await prompting { try await flows.pay(arguments[0]) }
            write("✓ paid \(PromptCopy(language: language).amount(paid.amount)) to \(paid.payeeName); receipt verified (signed by the server's key)")
        case "pay-pin":
            try require(2, "pay-pin PAYMENT_ID PIN")
            let paid = try await flows.pay(arguments[0], pin: arguments[1])
            write("✓ paid \(PromptCopy(language: language).amount(paid.amount)) to \(paid.payeeName) with the PIN; receipt verified")
        case "approvals":
            let pending = try await flows.pendingApprovals()
            if pending.isEmpty { write("no requests waiting") }
            for approval in pending { write(describe(approval)) }
        case "scan":
            try require(1, "scan URL")
            write(describe(try await flows.openScannedURL(arguments[0])))
        case "approve":
            try require(1, "approve APPROVAL_ID [NUMBER]")
            let approval = try await phone.api.approval(arguments[0], accessToken: try await flows.accessToken())
            let number = try arguments.dropFirst().first.map { text -> Int in
                guard let number = Int(text) else { throw DeviceCommandError.usage("approve APPROVAL_ID [NUMBER]: the number is 10-99") }
                return number
            }
            let approved = try await prompting { try await flows.approve(approval, number: number) }
            write(
                "✓ approved; the signed approval verifies with the server's receipt key (\(approved.signedApproval?.amr.joined(separator: " ") ?? "-"))"
            )
        case "deny":
            try require(1, "deny APPROVAL_ID")
            _ = try await flows.deny(arguments[0])
            write("✓ denied")
        case "devices":
            for device in try await phone.api.devices(accessToken: try await flows.accessToken()) {
                let state =
                    device.revokedAt != nil
                    ? "  (revoked)" : device.coolingOffUntil.map { "  (cooling off until \($0.formatted(.iso8601)))" } ?? ""
                write("  \(device.id)  \(device.biometryKind)  \(device.name)  bound by \(device.boundBy)\(state)")
            }
        case "revoke":
            try require(1, "revoke DEVICE_ID")
            try await flows.revokeDevice(arguments[0])
            write("✓ device revoked")
        case "disable-biometrics":
            try await flows.disableBiometricSignIn()
            write("✓ biometric sign-in is off; the key is deleted and the device revoked")
        case "signout":
            try await flows.signOut()
            write("✓ signed out (biometric sign-in stays available)")
        default:
            throw DeviceCommandError.usage("unknown command \(command); try help")
        }
    }

    /// A request as the phone lists it: what the prompt will say, and the numbers to pick from for a sign-in.
    private func describe(_ approval: ApprovalDetails) -> String {
        let reason = PromptCopy(language: phone.language).approvalReason(approval.summary)
        let from = approval.channel.address.isEmpty ? "" : " from \(approval.channel.address)"
        let numbers = approval.numberChoices.isEmpty ? "" : "  pick one: \(approval.numberChoices.map(String.init).joined(separator: " "))"
        return "  \(approval.id)  “\(reason)”\(from)\(numbers)  until \(approval.expiresAt)"
    }

    /// The three flags such apps keep, said in words: whether a session is alive, whether biometric sign-in is on,
    /// and whether the user got past the sign-in or lock screen on this launch.
    static func describe(_ flags: LegacyLoginFlags) -> String {
        func said(_ flag: Bool?) -> String { flag.map { $0 ? "yes" : "no" } ?? "not known" }
        return "signed in: \(said(flags.loginState)), biometric sign-in on: \(said(flags.startAutoLoginState)), "
            + "past the lock on this launch: \(said(flags.isAppCurrentLoginState))"
    }

    private func status() async throws {
        let snapshot = await phone.flows.snapshot
        let sensor = phone.sensor
        let kind = await sensor.kind
        var lines = [
            "session: \(snapshot.state.rawValue) (\(Self.describe(snapshot.legacyFlags)))",
            "account: \(snapshot.accountID ?? "-")",
        ]
        switch snapshot.biometricSignIn {
        case .enabled(let binding): lines.append("biometric sign-in: on (\(binding.biometry), device \(binding.deviceID ?? "?"))")
        case .turnedOff(let reason): lines.append("biometric sign-in: off — \(reason.message(in: phone.language, biometry: kind))")
        case .declined: lines.append("biometric sign-in: declined (稍后)")
        case .notOffered: lines.append("biometric sign-in: never offered")
        }
        let queued = await sensor.queuedOutcomes.map(\.rawValue)
        lines.append(
            "sensor: \(kind), \(await sensor.isLockedOut ? "locked out" : "\(await sensor.consecutiveFailures) failures in a row")"
                + (queued.isEmpty ? "" : ", next touches: \(queued.joined(separator: " "))")
        )
        lines.append("server: \(phone.settings.server)")
        write(lines.joined(separator: "\n"))
    }

    /// Runs `body`, answering prompts that no `touch` was queued for by asking the person at the keyboard.
    /// Every prompt shown is printed once, with its reason, whether it was answered from the queue or here.
    private func prompting<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let sensor = phone.sensor
        let ask = self.ask
        let write = self.write
        let first = await sensor.presentedPrompts.count
        let watcher = Task {
            var announced = first
            while !Task.isCancelled {
                if await sensor.isWaitingForUser {
                    let prompts = await sensor.presentedPrompts
                    for prompt in prompts[announced...] { write("📱 “\(prompt.reason)”") }
                    announced = prompts.count
                    let answer = ask("   match / nomatch / cancel / fallback / passcode? ")
                    let outcome = answer.flatMap(Self.outcome)
                    if outcome == nil { write("   (\(answer.map { "“\($0)” is not an answer" } ?? "no answer"): cancelled)") }
                    await sensor.perform(outcome ?? .cancel)
                }
                try? await Task.sleep(for: .milliseconds(5))
            }
            return announced
        }
        let result: Result<T, any Error>
        do { result = .success(try await body()) } catch { result = .failure(error) }
        watcher.cancel()
        let announced = await watcher.value
        for prompt in await sensor.presentedPrompts[announced...] { write("📱 “\(prompt.reason)”") }
        return try result.get()
    }

    /// Splits a typed line into words; "double" or 'single' quotes keep spaces. `nil` for an unclosed quote.
    static func words(_ line: String) -> [String]? {
        var words: [String] = []
        var current = ""
        var quote: Character?
        var inWord = false
        for character in line {
            if let open = quote {
                if character == open { quote = nil } else { current.append(character) }
            } else if character == "\"" || character == "'" {
                quote = character
                inWord = true
            } else if character.isWhitespace {
                if inWord { words.append(current) }
                current = ""
                inWord = false
            } else {
                current.append(character)
                inWord = true
            }
        }
        guard quote == nil else { return nil }
        if inWord { words.append(current) }
        return words
    }

    static func outcome(_ word: String) -> SimulatedAuthenticator.Outcome? {
        switch word.lowercased().trimmingCharacters(in: .whitespaces) {
        case "match", "m": .match
        case "nomatch", "no-match", "n": .nonMatch
        case "cancel", "c": .cancel
        case "fallback", "f": .fallback
        case "passcode", "p": .passcode
        default: nil
        }
    }

    private func describe(_ error: any Error, biometry: BiometryKind) -> String {
        switch error {
        case let error as BiometricError:
            "\(error.message(in: phone.language, biometry: biometry)) (\(error.code); recovery: \(error.recovery))"
        case let problem as APIProblem:
            "\(problem.message(in: phone.language)) (\(problem.code)\(problem.status.map { ", HTTP \($0)" } ?? ""); recovery: \(problem.recovery))"
        case let error as SessionError:
            "\(error.reason) (\(error.code))"
        default:
            "\(error)"
        }
    }
}
