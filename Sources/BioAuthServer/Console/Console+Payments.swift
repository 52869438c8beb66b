import BioAuthCore
import Foundation
import HTTPTypes
import Hummingbird

/// The payment search across customers.
extension Console {
    /// The payment search.
    func addPaymentRoutes(to router: Router<BioAuthRequestContext>) {
        let console = self
        router.get("/console/payments") { request, _ in try await console.payments(request) }
    }

    /// The payments search: a payment id opens the payment; otherwise the filters (amounts in major units of the chosen
    /// currency, dates in the console's time zone).
    func payments(_ request: Request) async throws -> Response {
        let (found, elsewhere) = try await signedIn(request)
        guard let session = found else { return elsewhere }
        let language = Self.language(request)
        let clock = consoleTime(request)
        let query = request.uri.queryParameters
        let given = { (name: String) -> String in query.get(name)?.trimmingCharacters(in: .whitespaces) ?? "" }
        if !given("id").isEmpty {
            if case .id("payment", let id, let accountID) = try? await desk.search(given("id")) {
                return Self.redirect("/console/customers/\(Self.pathSafe(accountID))/payments/\(Self.pathSafe(id))")
            }
            let content = templates.render(["t": language.text, "id": given("id"), "currencies": [] as [Any]], withTemplate: "payments") ?? ""
            return page(
                request,
                title: language["paymentSearch"],
                content: content,
                session: session,
                error: language["noPayment"],
                status: .notFound
            )
        }
        let day = DateFormatter()
        day.locale = Locale(identifier: "en_US_POSIX")
        day.timeZone = clock.timeZone
        day.dateFormat = "yyyy-MM-dd"
        let currency = Currency(code: given("currency").isEmpty ? "CNY" : given("currency")) ?? .cny
        var view: [String: Any] = [
            "t": language.text, "payee": given("payee"), "from": given("from"), "until": given("until"), "min": given("min"), "max": given("max"),
            "statuses": ["pending", "authorized", "cancelled", "expired", "locked"].map {
                ["value": $0, "label": language.word("status", $0), "selected": $0 == given("status")]
            },
            "currencies": Currency.all.map { ["code": $0.code, "selected": $0 == currency] },
        ]
        var error: String?
        var search = SupportDesk.PaymentSearch(status: given("status").isEmpty ? nil : given("status"), payee: given("payee"))
        for (name, apply) in [
            ("from", { (text: String) -> Bool in day.date(from: text).map { search.from = $0 } != nil }),
            ("until", { (text: String) -> Bool in day.date(from: text).map { search.until = $0 } != nil }),
            (
                "min",
                { (text: String) -> Bool in Money(decimalString: text, currency: currency).map { search.minAmountMinor = $0.minorUnits } != nil }
            ),
            (
                "max",
                { (text: String) -> Bool in Money(decimalString: text, currency: currency).map { search.maxAmountMinor = $0.minorUnits } != nil }
            ),
        ] where !given(name).isEmpty && !apply(given(name)) {
            error = "\(language["error.search"]) \(language["field.\(name)"])"
        }
        if search.minAmountMinor != nil || search.maxAmountMinor != nil { search.currency = currency.code }
        if error == nil {
            do {
                view["results"] = try await desk.payments(search).map { found -> [String: Any] in
                    [
                        "id": found.payment.id, "accountID": found.accountID, "username": found.username,
                        "amount": Self.amount(found.payment.amount), "payeeName": found.payment.payeeName, "payeeID": found.payment.payeeID,
                        "status": language.word("status", found.payment.status), "createdAt": clock.format(found.payment.createdAt),
                    ]
                }
            } catch let refused as SupportError {
                error = "\(language["error.search"]) \(refused.description)"
            }
        }
        let content = templates.render(view, withTemplate: "payments") ?? ""
        return page(
            request,
            title: language["paymentSearch"],
            content: content,
            session: session,
            error: error,
            status: error == nil ? .ok : .badRequest
        )
    }
}
