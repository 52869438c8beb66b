import BioAuthCore
import Foundation
import HTTPTypes
import Hummingbird

/// The support actions on a customer, each with a reason; those that can't be undone first ask to confirm, naming what
/// they act on.
extension Console {
    /// The customer's page's forms: revoke a device or passkey, end one session or all, lift a lock, cancel a payment.
    func addCustomerActionRoutes(to router: Router<BioAuthRequestContext>) {
        let console = self
        router.post("/console/customers/{account}/devices/{device}/revoke") { request, context in
            let account = try context.parameters.require("account")
            let device = try context.parameters.require("device")
            let naming: Naming = { desk, _ in
                guard let found = try await desk.customer(account).devices.first(where: { $0.id == device && $0.revokedAt == nil }) else {
                    throw SupportError.notFound("the customer has no live device \(device)")
                }
                return found.name
            }
            return try await console.act(request, account: account, done: "revoked", confirming: naming) { name, reason in
                try await console.desk.revokeDevice(device, customer: account, operator: name, reason: reason)
            }
        }
        router.post("/console/customers/{account}/passkeys/{passkey}/revoke") { request, context in
            let account = try context.parameters.require("account")
            let passkey = try context.parameters.require("passkey")
            let naming: Naming = { desk, _ in
                guard let found = try await desk.customer(account).passkeys.first(where: { $0.id == passkey && $0.revokedAt == nil }) else {
                    throw SupportError.notFound("the customer has no live passkey \(passkey)")
                }
                return found.name
            }
            return try await console.act(request, account: account, done: "passkey-revoked", confirming: naming) { name, reason in
                try await console.desk.revokePasskey(passkey, customer: account, operator: name, reason: reason)
            }
        }
        router.post("/console/customers/{account}/sessions/{session}/end") { request, context in
            let account = try context.parameters.require("account")
            let session = try context.parameters.require("session")
            let naming: Naming = { desk, language in
                let record = try await desk.customer(account)
                guard let found = record.sessions.first(where: { $0.id == session }) else {
                    throw SupportError.notFound("the customer has no live session \(session)")
                }
                return Self.describe(found, of: record, language: language)
            }
            return try await console.act(request, account: account, done: "session-ended", confirming: naming) { name, reason in
                try await console.desk.endSession(session, customer: account, operator: name, reason: reason)
            }
        }
        router.post("/console/customers/{account}/end-sessions") { request, context in
            let account = try context.parameters.require("account")
            let naming: Naming = { desk, _ in try await desk.customer(account).username }
            return try await console.act(request, account: account, done: "sessions-ended", confirming: naming) { name, reason in
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
            let naming: Naming = { desk, _ in
                let found = try await desk.payment(payment, customer: account).payment
                guard found.status == "pending" else { throw SupportError.invalid("the payment is \(found.status), not pending") }
                return "\(Self.amount(found.amount)) → \(found.payeeName)"
            }
            return try await console.act(request, account: account, done: "cancelled", confirming: naming) { name, reason in
                try await console.desk.cancelPayment(payment, customer: account, operator: name, reason: reason)
            }
        }
    }

    /// What an action that asks to confirm acts on, as the confirmation names it; `SupportError.notFound` when the
    /// customer has no such thing, or it is over already (a revoked device, an ended session).
    typealias Naming = @Sendable (SupportDesk, ConsoleLanguage) async throws -> String

    /// A session as support tells it apart: the device or passkey that opened it (or how), where from, and since when.
    static func describe(_ session: CustomerRecord.Session, of record: CustomerRecord, language: ConsoleLanguage) -> String {
        var parts: [String] = []
        if let id = session.deviceID, let device = record.devices.first(where: { $0.id == id }) {
            parts.append(device.name)
        } else if let id = session.passkeyID, let passkey = record.passkeys.first(where: { $0.id == id }) {
            parts.append(passkey.name)
        }
        parts.append(language.word("method", session.method))
        if let address = session.clientAddress { parts.append(address) }
        return parts.joined(separator: " · ")
    }

    /// A support action from a form: the session, the CSRF token, the origin and the role are checked, then `body` runs
    /// with the operator's name and the reason; afterwards the customer's page is shown again. An action that can't be
    /// undone (`confirming`: revoke, cancel, end sessions) first answers a page that asks to confirm it, naming what it
    /// acts on, with the reason given, and runs only when that page's form comes back (`confirmed=yes`, with a fresh CSRF
    /// check).
    func act(
        _ request: Request,
        account: String,
        done: String,
        confirming naming: Naming? = nil,
        _ body: @Sendable (String, String) async throws -> Void
    ) async throws -> Response {
        try await acting(request) { session, form in
            guard session.operator.role != .viewer else { return forbidden(request, "error.viewer", session: session) }
            do {
                if let naming, form["confirmed"] != "yes" {
                    // The reason and the role are checked before asking, so that the answer to a confirmation is not a refusal.
                    _ = try await desk.authorize(session.operator.name, reason: form["reason"] ?? "")
                    let object = try await naming(desk, Self.language(request))
                    return confirmation(request, done: done, object: object, account: account, reason: form["reason"] ?? "", session: session)
                }
                try await body(session.operator.name, form["reason"] ?? "")
            } catch let error as SupportError {
                return notDone(request, error, session: session)
            }
            return Self.redirect("/console/customers/\(Self.pathSafe(account))?done=\(done)")
        }
    }

    /// The page that asks to confirm the action `done` names on `object`, posting the same form back to the same
    /// address; its language links lead back to the customer's page (the address it posts to takes no GET).
    func confirmation(
        _ request: Request,
        done: String,
        object: String,
        account: String,
        reason: String,
        session: ConsoleSessions.Session
    ) -> Response {
        let language = Self.language(request)
        let back = "/console/customers/\(Self.pathSafe(account))"
        let view: [String: Any] = [
            "t": language.text, "csrf": session.csrfToken, "action": request.uri.path, "reason": reason, "object": object,
            "question": language["confirm.\(done)"], "consequence": language["confirm.\(done).detail"],
            "button": language["confirm.\(done).button"], "back": back,
        ]
        return page(
            request,
            title: language["confirm.\(done)"],
            content: templates.render(view, withTemplate: "confirm") ?? "",
            session: session,
            languagesAt: back
        )
    }
}
