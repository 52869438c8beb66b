import BioAuthCore
import Foundation
import SQLKit

extension SQLDatabase {
    /// `qr_sign_ins`: the QR codes of the web sign-in page, each bound to the browser that showed it.
    var qrSignIns: QRSignInsTable { QRSignInsTable(db: self) }
}

/// A QR code the web page shows, as stored.
struct QRSignIn: Sendable, Equatable {
    var id: String
    /// SHA-256 of the cookie set with it (base64url): only that browser collects the session.
    var browserHash: String
    /// Where the page was opened, as the phone will show it.
    var channel: CanonicalApproval.Channel
    /// The number the page shows beside the code.
    var matchNumber: Int
    var createdAt: Date
    /// When the code stops being accepted by a phone (30 seconds after it was made).
    var expiresAt: Date
    /// The approval request made when a phone scanned it.
    var approvalID: String?
}

/// The statements on `qr_sign_ins`.
struct QRSignInsTable: Table {
    let db: any SQLDatabase

    private static let columns = [
        "id", "browser_hash", "channel_browser", "channel_platform", "channel_address", "match_number", "created_at", "expires_at", "approval_id",
    ]

    /// Stores a new code; `codeHash` is the hash of the code in the QR.
    func insert(_ code: QRSignIn, codeHash: String) async throws {
        try await db.insert(into: "qr_sign_ins").columns(Self.columns + ["code_hash", "scanned_at"])
            .values(
                SQLBind(code.id),
                SQLBind(code.browserHash),
                SQLBind(code.channel.browser.isEmpty ? nil : code.channel.browser),
                SQLBind(code.channel.platform.isEmpty ? nil : code.channel.platform),
                SQLBind(code.channel.address.isEmpty ? nil : code.channel.address),
                SQLBind(code.matchNumber),
                SQLBind(code.createdAt.millisecondsSince1970),
                SQLBind(code.expiresAt.millisecondsSince1970),
                SQLBind(String?.none),
                SQLBind(codeHash),
                SQLBind(Int64?.none)
            )
            .run()
    }

    /// The code `id`.
    func find(_ id: String) async throws -> QRSignIn? {
        try await select().where("id", .equal, id).first().map(Self.code)
    }

    /// The code whose QR content hashes to `hash`.
    func find(codeHash hash: String) async throws -> QRSignIn? {
        try await select().where("code_hash", .equal, hash).first().map(Self.code)
    }

    /// Records the scan that made approval request `approval`; false when the code was scanned already (or has expired
    /// by `at`). The condition makes each code usable once.
    func markScanned(_ id: String, approval: String, at: Int64) async throws -> Bool {
        !(try await db.update("qr_sign_ins").set("approval_id", to: approval).set("scanned_at", to: at)
            .where("id", .equal, id).where("approval_id", .is, SQLLiteral.null).where("expires_at", .greaterThan, at)
            .returning("id").all()).isEmpty
    }

    private func select() -> SQLSelectBuilder { db.select().columns(Self.columns.map { SQLColumn($0) }).from("qr_sign_ins") }

    private static func code(_ row: any SQLRow) throws -> QRSignIn {
        QRSignIn(
            id: try row.decode(column: "id", as: String.self),
            browserHash: try row.decode(column: "browser_hash", as: String.self),
            channel: .init(
                browser: try row.decode(column: "channel_browser", as: String?.self) ?? "",
                platform: try row.decode(column: "channel_platform", as: String?.self) ?? "",
                address: try row.decode(column: "channel_address", as: String?.self) ?? ""
            ),
            matchNumber: try row.decode(column: "match_number", as: Int.self),
            createdAt: Date(millisecondsSince1970: try row.decode(column: "created_at", as: Int64.self)),
            expiresAt: Date(millisecondsSince1970: try row.decode(column: "expires_at", as: Int64.self)),
            approvalID: try row.decode(column: "approval_id", as: String?.self)
        )
    }
}

// MARK: Retention

extension QRSignInsTable {
    /// The web page's QR codes that expired before `cutoff` (scanned or not: the approval request keeps what was approved).
    static func purge(expiredBefore cutoff: Int64) -> PurgeRule {
        PurgeRule(table: "qr_sign_ins", key: "id", condition: "expires_at < \(bind: cutoff)")
    }
}
