import BioAuthCore
import Foundation
import HTTPTypes
import Hummingbird

/// What only admins do: operators, payees, service clients; and what they read: operator changes, webhook endpoints and
/// how their deliveries stand.
extension Console {
    /// The admin page and its actions.
    func addAdminRoutes(to router: Router<BioAuthRequestContext>) {
        let console = self
        router.get("/console/admin") { request, _ in try await console.admin(request) }
        router.post("/console/admin/operators") { request, _ in
            try await console.administering(request, done: "operator-created") { session, form in
                let role = OperatorRole(rawValue: form["role"] ?? "") ?? .viewer
                _ = try await console.desk.createOperator(
                    name: form["name"] ?? "",
                    role: role,
                    password: form["password"] ?? "",
                    by: session.operator
                )
            }
        }
        // An admin's changes of another operator: the name from the path, the reason (and what else) from the form.
        let operatorActions: [(path: String, done: String, act: @Sendable (SupportDesk, String, [String: String], Operator) async throws -> Void)] = [
            ("disable", "operator-disabled", { try await $0.disableOperator(name: $1, reason: $2["reason"] ?? "", by: $3) }),
            ("enable", "operator-enabled", { try await $0.enableOperator(name: $1, reason: $2["reason"] ?? "", by: $3) }),
            (
                "role", "operator-role-changed",
                { desk, name, form, admin in
                    guard let role = OperatorRole(rawValue: form["role"] ?? "") else {
                        throw SupportError.invalid("the role is viewer, support or admin")
                    }
                    try await desk.changeOperatorRole(name: name, to: role, reason: form["reason"] ?? "", by: admin)
                }
            ),
            (
                "reset-password", "operator-password-reset",
                { try await $0.resetOperatorPassword(name: $1, temporaryPassword: $2["password"] ?? "", reason: $2["reason"] ?? "", by: $3) }
            ),
            ("reset-totp", "operator-totp-reset", { try await $0.resetOperatorTOTP(name: $1, reason: $2["reason"] ?? "", by: $3) }),
        ]
        for action in operatorActions {
            router.post(RouterPath("/console/admin/operators/{name}/\(action.path)")) { request, context in
                let name = try context.parameters.require("name")
                return try await console.administering(request, done: action.done) { session, form in
                    try await action.act(console.desk, name, form, session.operator)
                }
            }
        }
        router.post("/console/admin/service-clients/{client}/disable") { request, context in
            let client = try context.parameters.require("client")
            return try await console.administering(request, done: "client-disabled") { session, _ in
                try await console.desk.disableServiceClient(client, by: session.operator)
            }
        }
        router.post("/console/admin/payees") { request, _ in
            try await console.administering(request, done: "payee-registered") { session, form in
                try await console.desk.registerPayee(
                    id: form["payeeId"] ?? "",
                    name: form["name"] ?? "",
                    verified: form["unverified"] == nil,
                    by: session.operator
                )
            }
        }
    }

    /// Operators, payees and service clients, for admins.
    func admin(_ request: Request) async throws -> Response {
        let (found, elsewhere) = try await signedIn(request)
        guard let session = found else { return elsewhere }
        guard session.operator.role == .admin else { return forbidden(request, "error.admin", session: session) }
        let language = Self.language(request)
        let clock = consoleTime(request)
        let operators = try await Operators(service: service).list()
        let names = Dictionary(operators.map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
        let payees = try await PayeeRegistry(database: service.database, clock: service.clock).list()
        let clients = try await ServiceClients(database: service.database, clock: service.clock, random: service.random).list()
        let clientNames = Dictionary(clients.map { ($0.id, $0.shownName) }, uniquingKeysWith: { first, _ in first })
        let roles = OperatorRole.allCases.map(\.rawValue)
        let view: [String: Any] = [
            "t": language.text, "csrf": session.csrfToken,
            "newRoles": roles.map { ["value": $0, "label": language.word("role", $0)] },
            "operators": operators.map { item -> [String: Any] in
                let state =
                    item.disabledAt != nil
                    ? "disabled" : item.mustChangePassword ? "passwordNotChosen" : item.totpEnrolled ? "active" : "totpPending"
                return [
                    "id": item.id, "name": item.name, "role": language.word("role", item.role.rawValue), "createdAt": clock.format(item.createdAt),
                    "lastSignInAt": item.lastSignInAt.map(clock.format) ?? language["never"],
                    "state": language[state], "disabled": item.disabledAt != nil, "isSelf": item.id == session.operator.id,
                    "roles": roles.map { ["value": $0, "label": language.word("role", $0), "selected": $0 == item.role.rawValue] },
                ]
            },
            "changes": try await desk.operatorChanges(limit: 50).map { change -> [String: Any] in
                [
                    "occurredAt": clock.format(change.occurredAt), "kind": language.word("kind", change.kind),
                    "by": names[change.operatorID] ?? change.operatorID, "details": change.reason,
                ]
            },
            "payees": payees.map {
                [
                    "id": $0.id, "name": $0.name, "verification": language.word("verification", $0.verification.rawValue),
                    "registeredBy": names[$0.registeredBy] ?? $0.registeredBy,
                ]
            },
            "clients": clients.map { client -> [String: Any] in
                [
                    "id": client.id, "name": client.name, "displayName": client.displayName ?? "", "scopes": client.scopes.joined(separator: " "),
                    "state": client.disabledAt != nil ? language["disabled"] : language["active"], "canDisable": client.disabledAt == nil,
                ]
            },
            "endpoints": try await desk.webhookEndpoints(hours: 24).map { endpoint -> [String: Any] in
                let health = endpoint.health
                var row: [String: Any] = [
                    "id": endpoint.id, "client": clientNames[endpoint.clientID] ?? endpoint.clientID, "clientID": endpoint.clientID,
                    "url": endpoint.url, "events": endpoint.events.joined(separator: " "),
                    "state": language[health.isFailing ? "webhookFailing" : health.delivered > 0 ? "webhookHealthy" : "webhookIdle"],
                    "failing": health.isFailing, "delivered": health.delivered, "retrying": health.retrying, "givenUp": health.givenUp,
                    "waiting": health.waiting, "lastDeliveredAt": health.lastDeliveredAt.map(clock.format) ?? language["never"],
                ]
                if let failure = health.lastFailure {
                    row["lastFailure"] = [failure.statusCode.map { "HTTP \($0)" }, failure.error].compactMap { $0 }.joined(separator: ", ")
                    row["lastFailureAt"] = clock.format(failure.deliveryCreatedAt)
                }
                return row
            },
        ]
        let flash = request.uri.queryParameters.get("done").flatMap { Self.flashes.contains($0) ? language["done.\($0)"] : nil }
        return page(
            request,
            title: language["administration"],
            content: templates.render(view, withTemplate: "admin") ?? "",
            session: session,
            flash: flash
        )
    }

    /// An admin's form post: session, origin, CSRF token and the admin role checked, then `body`; back to the admin page.
    func administering(
        _ request: Request,
        done: String,
        _ body: @Sendable (ConsoleSessions.Session, [String: String]) async throws -> Void
    ) async throws -> Response {
        try await acting(request) { session, form in
            guard session.operator.role == .admin else { return forbidden(request, "error.admin", session: session) }
            do {
                try await body(session, form)
            } catch let error as SupportError {
                return notDone(request, error, session: session)
            }
            return Self.redirect("/console/admin?done=\(done)")
        }
    }
}
