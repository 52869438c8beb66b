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

    /// A problem with `code`.
    public init(_ code: ProblemCode, status: Int? = nil, detail: String) {
        self.code = code
        self.status = status
        self.detail = detail
    }

    /// What to tell the user, in `language`: the code's own text, else its ``kind``'s (which says who can act), else a
    /// general one for a code this SDK does not know.
    public func message(in language: Language) -> String {
        Localizer.template("problem.\(code.rawValue)", language: language)
            ?? kind.flatMap { Localizer.template("problem.kind.\($0.rawValue)", language: language) }
            ?? Localizer.string("problem.other", language: language)
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
