import BioAuthCore
import Foundation
import HTTPTypes
import Hummingbird

/// Finding a customer, their record and one payment's history, and the support actions on them (each with a reason).
extension Console {
    /// The customer search, a customer's page and payment page, and the actions on them.
    func addCustomerRoutes(to router: Router<BioAuthRequestContext>) {
        let console = self
        router.get("/console/customers") { request, _ in try await console.customers(request) }
        router.get("/console/customers/{account}") { request, context in
            try await console.customer(request, account: try context.parameters.require("account"))
        }
        router.get("/console/customers/{account}/payments/{payment}") { request, context in
            try await console.paymentPage(
                request,
                account: try context.parameters.require("account"),
                payment: try context.parameters.require("payment")
            )
        }
        router.post("/console/customers/{account}/devices/{device}/revoke") { request, context in
            let account = try context.parameters.require("account")
            let device = try context.parameters.require("device")
            return try await console.act(request, account: account, done: "revoked", confirming: true) { name, reason in
                try await console.desk.revokeDevice(device, customer: account, operator: name, reason: reason)
            }
        }
        router.post("/console/customers/{account}/passkeys/{passkey}/revoke") { request, context in
            let account = try context.parameters.require("account")
            let passkey = try context.parameters.require("passkey")
            return try await console.act(request, account: account, done: "passkey-revoked", confirming: true) { name, reason in
                try await console.desk.revokePasskey(passkey, customer: account, operator: name, reason: reason)
            }
        }
        router.post("/console/customers/{account}/end-sessions") { request, context in
            let account = try context.parameters.require("account")
            return try await console.act(request, account: account, done: "sessions-ended", confirming: true) { name, reason in
                try await console.desk.endSessions(customer: account, operator: name, reason: reason)
            }
        }
        router.post("/console/customers/{account}/unlock") { request, context in
            let account = try context.parameters.require("account")
            return try await console.act(request, account: account, done: "unlocked") { name, reason in
                try await console.desk.unlockAccount(customer: account, operator: name, reason: reason)
            }
        }
        router.post("/console/customers/{account}/clear-pin-lock") { request, context in
            let account = try context.parameters.require("account")
            return try await console.act(request, account: account, done: "pin-unlocked") { name, reason in
                try await console.desk.clearPINLock(customer: account, operator: name, reason: reason)
            }
        }
        router.post("/console/customers/{account}/payments/{payment}/cancel") { request, context in
            let account = try context.parameters.require("account")
            let payment = try context.parameters.require("payment")
            return try await console.act(request, account: account, done: "cancelled", confirming: true) { name, reason in
                try await console.desk.cancelPayment(payment, customer: account, operator: name, reason: reason)
            }
        }
    }

    /// The customer search: an id a customer reads out opens its customer (a payment id, the payment); the start of a
    /// username in any case lists the customers it matches, or opens the one that is exactly it.
    func customers(_ request: Request) async throws -> Response {
        let (found, elsewhere) = try await signedIn(request)
        guard let session = found else { return elsewhere }
        let language = Self.language(request)
        let query = request.uri.queryParameters.get("q")?.trimmingCharacters(in: .whitespaces) ?? ""
        var view: [String: Any] = ["query": query, "t": language.text]
        if !query.isEmpty {
            switch try? await desk.search(query) {
            case .id(let kind, let id, let accountID):
                let customer = "/console/customers/\(Self.pathSafe(accountID))"
                return Self.redirect(kind == "payment" ? "\(customer)/payments/\(Self.pathSafe(id))" : customer)
            case .usernames(let matches) where matches.count == 1 && matches[0].username == query.lowercased():
                return Self.redirect("/console/customers/\(Self.pathSafe(matches[0].accountID))")
            case .usernames(let matches) where !matches.isEmpty:
                view["hasMatches"] = true
                view["matches"] = matches.map { ["accountID": $0.accountID, "username": $0.username] }
            default:
                view["notFound"] = true
                let content = templates.render(view, withTemplate: "customers") ?? ""
                return page(request, title: language["customers"], content: content, session: session, status: .notFound)
            }
        }
        let content = templates.render(view, withTemplate: "customers") ?? ""
        return page(request, title: language["customers"], content: content, session: session)
    }

    func customer(_ request: Request, account: String) async throws -> Response {
        let (found, elsewhere) = try await signedIn(request)
        guard let session = found else { return elsewhere }
        let language = Self.language(request)
        let record: CustomerRecord
        do {
            record = try await desk.customer(account)
        } catch is SupportError {
            return page(request, title: language["notFound"], content: "<h1>\(language["notFound"])</h1>", session: session, status: .notFound)
        }
        let canAct = session.operator.role != .viewer
        let clock = consoleTime(request)
        let operators = try await operatorNames()
        let deviceNames = Dictionary(record.devices.map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
        let passkeyNames = Dictionary(record.passkeys.map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
        let payments = Dictionary(record.payments.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var view: [String: Any] = [
            "username": record.username, "accountID": record.accountID, "createdAt": clock.format(record.createdAt), "csrf": session.csrfToken,
            "canAct": canAct, "hasSessions": !record.sessions.isEmpty, "t": language.text,
            "devices": record.devices.map { device -> [String: Any] in
                [
                    "id": device.id, "name": device.name, "biometryKind": language.word("biometry", device.biometryKind),
                    "attested": language[device.attestation == "apple-appattest" ? "yes" : "no"], "createdAt": clock.format(device.createdAt),
                    "lastUsedAt": clock.format(device.lastUsedAt),
                    "state": device.revokedAt.map { "\(language["revoked"]) \(clock.format($0))" } ?? language["active"],
                    "canRevoke": canAct && device.revokedAt == nil,
                ]
            },
            "passkeys": record.passkeys.map { passkey -> [String: Any] in
                [
                    "id": passkey.id, "name": passkey.name, "kind": language[passkey.backupEligible ? "passkeySynced" : "passkeyDeviceBound"],
                    "attestation": passkey.attestationFormat + (passkey.attestationTrusted ? " ✓" : ""), "createdAt": clock.format(passkey.createdAt),
                    "lastUsedAt": clock.format(passkey.lastUsedAt),
                    "state": passkey.revokedAt.map { "\(language["revoked"]) \(clock.format($0))" } ?? language["active"],
                    "canRevoke": canAct && passkey.revokedAt == nil,
                ]
            },
            "sessions": record.sessions.map { session -> [String: Any] in
                [
                    "id": session.id, "method": language.word("method", session.method), "installationID": session.installationID,
                    "createdAt": clock.format(session.createdAt),
                ]
            },
            "payments": record.payments.map { payment -> [String: Any] in
                [
                    "id": payment.id, "amount": Self.amount(payment.amount), "payeeName": payment.payeeName, "payeeID": payment.payeeID,
                    "status": language.word("status", payment.status), "createdAt": clock.format(payment.createdAt),
                    "canCancel": canAct && payment.status == "pending",
                ]
            },
            "approvals": record.approvals.map { approval -> [String: Any] in
                // What the phone showed: the operation's message, or where the sign-in came from.
                let channel = [approval.channel.browser, approval.channel.platform, approval.channel.address].filter { !$0.isEmpty }
                var outcome = language.word("approval", approval.status)
                if let reason = approval.denyReason { outcome += " (\(language.word("denyReason", reason)))" }
                if let device = approval.deviceID { outcome += " · \(language["device"]) \(deviceNames[device] ?? device)" }
                return [
                    "id": approval.id, "kind": language.word("approvalKind", approval.kind), "requester": approval.requester,
                    "what": approval.bindingMessage ?? (channel.isEmpty ? "–" : channel.joined(separator: " · ")), "outcome": outcome,
                    "createdAt": clock.format(approval.createdAt), "answeredAt": clock.format(approval.answeredAt),
                ]
            },
            "events": record.events.map { event -> [String: Any] in
                // What the event concerns, by the name the customer knows it by.
                var concerns: [String] = []
                if let id = event.deviceID { concerns.append("\(language["device"]) \(deviceNames[id] ?? id)") }
                if let id = event.passkeyID { concerns.append("\(language["passkey"]) \(passkeyNames[id] ?? id)") }
                if let id = event.paymentID {
                    concerns.append(
                        payments[id].map { "\(language["payment"]) \(Self.amount($0.amount)) → \($0.payeeName)" } ?? "\(language["payment"]) \(id)"
                    )
                }
                var row: [String: Any] = [
                    "occurredAt": clock.format(event.occurredAt), "kind": language.word("kind", event.kind),
                    "outcome": event.succeeded ? language.word("outcome", "success") : (event.code ?? language.word("outcome", "failure")),
                    "reason": event.reason ?? "", "concerns": concerns.joined(separator: "; "),
                ]
                if let id = event.operatorID { row["operatorName"] = operators[id] ?? id }
                if let address = event.clientAddress { row["address"] = address }
                if let agent = event.userAgent { row["userAgent"] = agent }
                return row
            },
        ]
        // Absent values are left out: the templates' sections test for presence.
        if let until = record.lockedUntil { view["lockedUntil"] = clock.format(until) }
        if let until = record.pinLockedUntil { view["pinLockedUntil"] = clock.format(until) }
        let flash = request.uri.queryParameters.get("done").flatMap { Self.flashes.contains($0) ? language["done.\($0)"] : nil }
        return page(request, title: record.username, content: templates.render(view, withTemplate: "customer") ?? "", session: session, flash: flash)
    }

    /// A payment's page: what it is, who asked for it, each attempt, who authorized it, its receipt checked, and the
    /// webhook deliveries of its events.
    func paymentPage(_ request: Request, account: String, payment paymentID: String) async throws -> Response {
        let (found, elsewhere) = try await signedIn(request)
        guard let session = found else { return elsewhere }
        let language = Self.language(request)
        let record: SupportDesk.PaymentRecord
        do {
            record = try await desk.payment(paymentID, customer: account)
        } catch is SupportError {
            return page(request, title: language["notFound"], content: "<h1>\(language["noPayment"])</h1>", session: session, status: .notFound)
        }
        let clock = consoleTime(request)
        let operators = try await operatorNames()
        let devices = try await desk.customer(record.accountID).devices
        let deviceName = { (id: String) in devices.first { $0.id == id }.map { "\($0.name) (\(language.word("biometry", $0.biometryKind)))" } ?? id }
        let payment = record.payment
        var view: [String: Any] = [
            "t": language.text, "csrf": session.csrfToken, "id": payment.id, "accountID": record.accountID, "username": record.username,
            "amount": Self.amount(payment.amount), "payeeName": payment.payeeName, "payeeID": payment.payeeID,
            "payeeVerified": record.payeeVerified.map { language.word("verification", $0 ? "verified" : "unverified") } ?? language["unknown"],
            "status": language.word("status", payment.status), "createdAt": clock.format(payment.createdAt),
            "expiresAt": clock.format(record.expiresAt), "failedAttempts": record.failedAttempts,
            "canCancel": session.operator.role != .viewer && payment.status == "pending",
            "steps": record.steps.map { step -> [String: Any] in
                var who: [String] = []
                if let client = step.clientID { who.append("\(language["serviceClientShort"]) \(client)") }
                if let device = step.deviceID { who.append("\(language["device"]) \(deviceName(device))") }
                if let id = step.operatorID { who.append("\(operators[id] ?? id): \(step.reason ?? "")") }
                if step.kind == "payment_created", step.clientID == nil { who.append(language["theCustomer"]) }
                return [
                    "occurredAt": clock.format(step.occurredAt),
                    "kind": step.kind == "payment_authorized" && !step.succeeded ? language["failedAttempt"] : language.word("kind", step.kind),
                    "outcome": step.succeeded ? language.word("outcome", "success") : (step.code ?? language.word("outcome", "failure")),
                    "who": who.joined(separator: "; "),
                ]
            },
            "challenges": record.challenges.map { challenge -> [String: Any] in
                [
                    "id": challenge.id, "device": challenge.deviceID.map(deviceName) ?? "–", "createdAt": clock.format(challenge.createdAt),
                    "expiresAt": clock.format(challenge.expiresAt),
                    "used": challenge.consumedAt.map(clock.format)
                        ?? language[challenge.expiresAt < clock.now ? "challengeExpired" : "challengeOpen"],
                ]
            },
            "deliveries": record.deliveries.map { delivery -> [String: Any] in
                [
                    "eventType": delivery.eventType, "endpointID": delivery.endpointID, "status": language.word("delivery", delivery.status),
                    "attempts": delivery.attempts, "lastStatus": delivery.lastStatusCode.map { "HTTP \($0)" } ?? "–",
                    "deliveredAt": clock.format(delivery.deliveredAt),
                ]
            },
        ]
        if let memo = record.memo { view["memo"] = memo }
        if let method = record.authorizationMethod {
            view["authorizedBy"] = method == "pin" ? language["byPIN"] : record.deviceID.map(deviceName) ?? language.word("method", method)
        }
        if let receipt = record.receipt {
            view["receipt"] = ["verdict": language[record.receiptVerifies ? "receiptVerifies" : "receiptFails"], "keyId": receipt.keyId]
        }
        let flash = request.uri.queryParameters.get("done").flatMap { Self.flashes.contains($0) ? language["done.\($0)"] : nil }
        return page(
            request,
            title: "\(language["payment"]) \(Self.amount(payment.amount))",
            content: templates.render(view, withTemplate: "payment") ?? "",
            session: session,
            flash: flash
        )
    }

    /// Every operator's name by id: audit events name operators by id.
    func operatorNames() async throws -> [String: String] {
        Dictionary(try await Operators(service: service).list().map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
    }

    /// An amount in major units with its currency: `88.00 CNY`.
    static func amount(_ money: Money?) -> String { money.map { "\($0.decimalString) \($0.currency.code)" } ?? "?" }

    /// A support action from a form: the session, the CSRF token, the origin and the role are checked, then `body` runs
    /// with the operator's name and the reason; afterwards the customer's page is shown again. An action that can't be
    /// undone (`confirming`: revoke, cancel, end sessions) first answers a page that asks to confirm it with the reason
    /// given, and runs only when that page's form comes back (`confirmed=yes`, with a fresh CSRF check).
    func act(
        _ request: Request,
        account: String,
        done: String,
        confirming: Bool = false,
        _ body: @Sendable (String, String) async throws -> Void
    ) async throws -> Response {
        try await acting(request) { session, form in
            guard session.operator.role != .viewer else { return forbidden(request, "error.viewer", session: session) }
            if confirming, form["confirmed"] != "yes" {
                return confirmation(request, done: done, account: account, reason: form["reason"] ?? "", session: session)
            }
            do {
                try await body(session.operator.name, form["reason"] ?? "")
            } catch let error as SupportError {
                return notDone(request, error, session: session)
            }
            return Self.redirect("/console/customers/\(Self.pathSafe(account))?done=\(done)")
        }
    }

    /// The page that asks to confirm the action `done` names, posting the same form back to the same address.
    func confirmation(_ request: Request, done: String, account: String, reason: String, session: ConsoleSessions.Session) -> Response {
        let language = Self.language(request)
        let view: [String: Any] = [
            "t": language.text, "csrf": session.csrfToken, "action": request.uri.path, "reason": reason,
            "question": language["confirm.\(done)"], "consequence": language["confirm.\(done).detail"],
            "button": language["confirm.\(done).button"], "back": "/console/customers/\(Self.pathSafe(account))",
        ]
        return page(
            request,
            title: language["confirm.\(done)"],
            content: templates.render(view, withTemplate: "confirm") ?? "",
            session: session
        )
    }
}
