import HTTPTypes

extension HTTPFields {
    /// What every page the server shows a browser carries (the operator console, the passkey web page): the page's
    /// own Content-Security-Policy, no framing (`X-Frame-Options: DENY`, besides the policy's `frame-ancestors`), no
    /// content-type sniffing, and no referrer to other sites (`same-origin`: with `no-referrer` a browser sends
    /// `Origin: null`, and an origin check could not tell the page's own forms from another site's).
    static func browserPage(contentSecurityPolicy: String) -> HTTPFields {
        [
            .contentSecurityPolicy: contentSecurityPolicy, HTTPField.Name("X-Frame-Options")!: "DENY", .xContentTypeOptions: "nosniff",
            HTTPField.Name("Referrer-Policy")!: "same-origin",
        ]
    }
}
