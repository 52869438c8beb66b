import BioAuthCore

/// A failure reported by the BioAuth server (its problem document) or met while talking to it.
///
/// Branch on ``code``: the server's stable `ProblemCode`s, plus `ProblemCode.serverUnreachable`
/// and `ProblemCode.unexpectedResponse` for failures on the way. Equality compares the code.
public struct APIProblem: Error, Hashable, Sendable, CustomStringConvertible {
    /// The stable code.
    public let code: ProblemCode
    /// The HTTP status, when the server answered.
    public let status: Int?
    /// The server's explanation, or what went wrong on the way. Not for branching.
    public let detail: String
    /// Seconds until the request may succeed, when the server said (its `Retry-After`: a rate limit, a lock).
    public let retryAfter: Int?
    /// For `step_up_required`: what the operation needs (RFC 9470's `acr_values` and `max_age`, and the table's action).
    public let stepUp: StepUpDemand?

    /// A problem with `code`.
    public init(_ code: ProblemCode, status: Int? = nil, detail: String, retryAfter: Int? = nil, stepUp: StepUpDemand? = nil) {
        self.code = code
        self.status = status
        self.detail = detail
        self.retryAfter = retryAfter
        self.stepUp = stepUp
    }

    /// What a sensitive operation asked for when it answered `step_up_required` (docs/PROTOCOL.md, "Step-up").
    public struct StepUpDemand: Hashable, Sendable {
        /// The level it needs, e.g. `urn:bioauth:acr:device-key`.
        public var acrValues: String
        /// The most seconds since that evidence it accepts.
        public var maxAge: Int?
        /// The action of the table it is, to name in the prompt and to bind the step-up to.
        public var action: StepUpAction

        /// Whether a step-up with this phone's device key meets it: one of the levels asked for (RFC 9470's `acr_values`
        /// is a space-separated list) is at most `urn:bioauth:acr:device-key`. An attested level is met only where the
        /// server requires App Attest, which decides; a level the key cannot give is met by signing in again.
        public var deviceKeyMeetsIt: Bool {
            let met: Set<Substring> = ["urn:bioauth:acr:password", "urn:bioauth:acr:synced-passkey", "urn:bioauth:acr:device-key"]
            return acrValues.split(separator: " ").contains { met.contains($0) }
        }

        public init(acrValues: String, maxAge: Int?, action: StepUpAction) {
            self.acrValues = acrValues
            self.maxAge = maxAge
            self.action = action
        }
    }

    /// What to tell the user, in `language`: the code's own text (saying how long to wait, when the server said), else
    /// its ``kind``'s (which says who can act), else a general one for a code this SDK does not know.
    public func message(in language: Language) -> String {
        if let retryAfter, Localizer.template("problem.\(code.rawValue).wait", language: language) != nil {
            return Localizer.string(
                "problem.\(code.rawValue).wait",
                language: language,
                arguments: [Self.wait(seconds: retryAfter, language: language)]
            )
        }
        return Localizer.template("problem.\(code.rawValue)", language: language)
            ?? kind.flatMap { Localizer.template("problem.kind.\($0.rawValue)", language: language) }
            ?? Localizer.string("problem.other", language: language)
    }

    /// "45 seconds", "5 minutes", "2 hours" ("45 秒", "5 分钟", "2 小时"), rounded up to the unit.
    static func wait(seconds: Int, language: Language) -> String {
        let (count, unit): (Int, String) =
            seconds < 60 ? (max(seconds, 1), "second") : seconds < 3600 ? ((seconds + 59) / 60, "minute") : ((seconds + 3599) / 3600, "hour")
        return Localizer.string("wait.\(unit)\(count == 1 ? "" : "s")", language: language, arguments: [String(count)])
    }

    public var description: String { "APIProblem(\(code)\(status.map { ", \($0)" } ?? "")): \(detail)" }
    public static func == (lhs: APIProblem, rhs: APIProblem) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}

extension ProblemCode {
    /// The server could not be reached (no network, refused connection, timeout). Nothing changed locally.
    public static let serverUnreachable = ProblemCode(rawValue: "server_unreachable")
    /// The server answered something this client does not understand (a 5xx without a problem document, a
    /// malformed body).
    public static let unexpectedResponse = ProblemCode(rawValue: "unexpected_response")
}

extension APIProblem {
    /// The stable problem code of `error` when it is an ``APIProblem``, else `nil`.
    public static func code(of error: any Error) -> String? { (error as? APIProblem)?.code.rawValue }
}
