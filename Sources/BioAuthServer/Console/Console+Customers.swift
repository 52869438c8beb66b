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
        addCustomerActionRoutes(to: router)
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
        let clientNames = try await serviceClientNames()
        var view: [String: Any] = [
            "username": record.username, "accountID": record.accountID, "createdAt": clock.format(record.createdAt), "csrf": session.csrfToken,
            "canAct": canAct, "hasSessions": !record.sessions.isEmpty, "t": language.text,
            "devices": record.devices.map { device -> [String: Any] in
                [
                    "id": device.id, "name": device.name, "biometryKind": language.word("biometry", device.biometryKind),
                    "attested": language[device.attestation == "apple-appattest" ? "yes" : "no"], "createdAt": clock.format(device.createdAt),
                    "lastUsedAt": clock.format(device.lastUsedAt), "boundBy": language.word("boundBy", device.boundBy),
                    // A device bound by a password alone says until when it cools off (no approvals elsewhere, a payment limit).
                    "state": device.revokedAt.map { "\(language["revoked"]) \(clock.format($0))" }
                        ?? device.coolingOffUntil.map { "\(language["coolingOffUntil"]) \(clock.format($0))" } ?? language["active"],
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
                // The device or passkey that opened it, by the name the customer knows it by.
                let opener =
                    session.deviceID.map { "\(language["device"]): \(deviceNames[$0] ?? $0)" }
                    ?? session.passkeyID.map { "\(language["passkey"]): \(passkeyNames[$0] ?? $0)" }
                // A service client's sign-in lives on the installation `approval:<client id>`: named by the client's name.
                let installation = BioAuthService.cibaClient(ofInstallation: session.installationID).flatMap { clientNames[$0] }
                    .map { "\($0) (\(language["serviceClientShort"]))" }
                var row: [String: Any] = [
                    "id": session.id, "method": language.word("method", session.method),
                    "installationID": installation ?? session.installationID, "createdAt": clock.format(session.createdAt), "canEnd": canAct,
                ]
                if let opener { row["opener"] = opener }
                if let address = session.clientAddress { row["address"] = address }
                if let agent = session.userAgent { row["userAgent"] = agent }
                return row
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
        let clientNames = try await serviceClientNames()
        var view: [String: Any] = [
            "t": language.text, "csrf": session.csrfToken, "id": payment.id, "accountID": record.accountID, "username": record.username,
            "amount": Self.amount(payment.amount), "payeeName": payment.payeeName, "payeeID": payment.payeeID,
            "payeeVerified": record.payeeVerified.map { language.word("verification", $0 ? "verified" : "unverified") } ?? language["unknown"],
            "status": language.word("status", payment.status), "createdAt": clock.format(payment.createdAt),
            "expiresAt": clock.format(record.expiresAt), "failedAttempts": record.failedAttempts,
            "canCancel": session.operator.role != .viewer && payment.status == "pending",
            "steps": record.steps.map { step -> [String: Any] in
                var who: [String] = []
                if let client = step.clientID { who.append("\(language["serviceClientShort"]) \(clientNames[client] ?? client)") }
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

    /// Every service client's name by id, as support calls it (its display name, else its name): payments and sessions
    /// name clients by id.
    func serviceClientNames() async throws -> [String: String] {
        let clients = try await ServiceClients(database: service.database, clock: service.clock, random: service.random).list()
        return Dictionary(clients.map { ($0.id, $0.shownName) }, uniquingKeysWith: { first, _ in first })
    }

    /// An amount in major units with its currency: `88.00 CNY`.
    static func amount(_ money: Money?) -> String { money.map { "\($0.decimalString) \($0.currency.code)" } ?? "?" }
}
