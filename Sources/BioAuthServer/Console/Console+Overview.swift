import BioAuthCore
import Foundation
import HTTPTypes
import Hummingbird

/// The overview: sign-ins by method (those approved on the phone included) and failures by code over the last day, drawn
/// as an SVG chart, and what became of the requests to approve on the phone.
extension Console {
    /// The overview, where `/console` leads.
    func addOverviewRoutes(to router: Router<BioAuthRequestContext>) {
        let console = self
        router.get("/console") { _, _ in Self.redirect("/console/overview") }
        router.get("/console/overview") { request, _ in try await console.overview(request) }
    }

    func overview(_ request: Request) async throws -> Response {
        let (found, elsewhere) = try await signedIn(request)
        guard let session = found else { return elsewhere }
        let language = Self.language(request)
        let clock = consoleTime(request)
        let overview = try await desk.overview(hours: 24, timeZone: clock.timeZone)
        let view: [String: Any] = [
            "t": language.text, "chart": Self.chart(overview, language: language, time: clock), "zone": clock.zoneName,
            "biometric": overview.hours.map(\.biometric).reduce(0, +), "passkey": overview.hours.map(\.passkey).reduce(0, +),
            "password": overview.hours.map(\.password).reduce(0, +), "ciba": overview.hours.map(\.ciba).reduce(0, +),
            "qr": overview.hours.map(\.qr).reduce(0, +), "failures": overview.hours.map(\.failures).reduce(0, +),
            "codes": overview.failuresByCode.map { ["code": $0.code, "count": $0.count] },
            "approvals": [("cibaLegend", overview.cibaApprovals), ("qrLegend", overview.qrApprovals)].map { key, counts -> [String: Any] in
                [
                    "channel": language[key], "requested": counts.requested, "approved": counts.approved, "denied": counts.denied,
                    "expired": counts.expired,
                ]
            },
        ]
        let flash = request.uri.queryParameters.get("done").flatMap { Self.flashes.contains($0) ? language["done.\($0)"] : nil }
        return page(
            request,
            title: language["overview"],
            content: templates.render(view, withTemplate: "overview") ?? "",
            session: session,
            flash: flash
        )
    }

    /// The hours as an SVG bar chart, six bars an hour (device key, passkey, password, approved on the phone for a service
    /// client, a scanned QR code, failed), drawn here from numbers only: no script, no style attribute (the CSP allows
    /// neither inline), every text escaped.
    static func chart(_ overview: SupportDesk.Overview, language: ConsoleLanguage, time: ConsoleTime) -> String {
        let width = 960
        let height = 260
        let left = 40
        let bottom = 30
        let top = 48
        let plot = Double(height - bottom - top)
        let values = { (hour: SupportDesk.Overview.Hour) in [hour.biometric, hour.passkey, hour.password, hour.ciba, hour.qr, hour.failures] }
        let highest = max(1, overview.hours.flatMap(values).max() ?? 1)
        let slot = Double(width - left - 10) / Double(max(overview.hours.count, 1))
        let bar = max(1, slot / 7)
        let colors = ["#1d4ed8", "#0f766e", "#64748b", "#7c3aed", "#c2410c", "#b91c1c"]
        var svg =
            ##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \##(width) \##(height)" width="100%" role="img" aria-label="\##(escape(language["signInsByHour"]))">"##
        svg += ##"<line x1="\##(left)" y1="\##(height - bottom)" x2="\##(width - 10)" y2="\##(height - bottom)" stroke="#94a3b8"/>"##
        svg += ##"<text x="\##(left - 6)" y="\##(top + 4)" text-anchor="end" font-size="11" fill="#475569">\##(highest)</text>"##
        svg += ##"<text x="\##(left - 6)" y="\##(height - bottom)" text-anchor="end" font-size="11" fill="#475569">0</text>"##
        for (index, hour) in overview.hours.enumerated() {
            let x = Double(left) + Double(index) * slot + bar / 2
            for (series, value) in values(hour).enumerated() where value > 0 {
                let h = plot * Double(value) / Double(highest)
                svg +=
                    ##"<rect x="\##(format(x + Double(series) * bar))" y="\##(format(Double(height - bottom) - h))" width="\##(format(bar))" height="\##(format(h))" fill="\##(colors[series])"><title>\##(value)</title></rect>"##
            }
            if index % 3 == 0 {
                let label = time.hour(hour.start)
                svg +=
                    ##"<text x="\##(format(x + 2 * bar))" y="\##(height - bottom + 16)" text-anchor="middle" font-size="11" fill="#475569">\##(label)</text>"##
            }
        }
        let legends = ["biometricLegend", "passkeyLegend", "passwordLegend", "cibaLegend", "qrLegend", "failuresLegend"]
        for (series, key) in legends.enumerated() {
            // Two rows of three.
            let x = left + (series % 3) * 300
            let y = 4 + (series / 3) * 18
            svg += ##"<rect x="\##(x)" y="\##(y)" width="12" height="12" fill="\##(colors[series])"/>"##
            svg += ##"<text x="\##(x + 18)" y="\##(y + 10)" font-size="12" fill="#1d2330">\##(escape(language[key]))</text>"##
        }
        return svg + "</svg>"
    }

    static func format(_ value: Double) -> String { String(format: "%.1f", value) }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
            .replacingOccurrences(of: "\"", with: "&quot;")
    }
}
