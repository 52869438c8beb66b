import Foundation
import Testing

@Suite("Audit log pages")
struct AuditPaginationTests {
    static func events(_ reply: Reply) -> [String] {
        ((reply.json["events"] as? [[String: Any]]) ?? []).compactMap { $0["eventId"] as? String }
    }

    @Test("the whole log can be read page by page: no event twice, none missed, even while new ones arrive")
    func pages() async throws {
        try await TestServer.run { api in
            try await api.createAccount()
            var token = try await api.signIn().access
            for index in 0..<24 { token = try await api.signIn(installation: "phone-\(index % 3)").access }
            let everything = Self.events(try await api.call(.get, "/v1/audit?limit=200", token: token))
            #expect(everything.count > 25)
            var seen: [String] = []
            var cursor: String?
            var pages = 0
            repeat {
                let path = "/v1/audit?limit=7" + (cursor.map { "&before=\($0)" } ?? "")
                let page = try await api.call(.get, path, token: token)
                #expect(page.status == 200, "\(page.raw)")
                seen += Self.events(page)
                cursor = page["next"]
                pages += 1
                // A new event while paging lands before the first page, not in the pages still to read.
                if pages == 2 { _ = try await api.signIn(installation: "phone-x") }
            } while cursor != nil && pages < 50
            #expect(seen == everything)
            #expect(Set(seen).count == seen.count)
        }
    }

    @Test("a cursor that is not one the server gave is refused", arguments: ["abc", "1.", ".1", "1.2.3", "-1.2", "99999999999999999999.1", "1.x"])
    func badCursor(_ cursor: String) async throws {
        try await TestServer.run { api in
            try await api.createAccount()
            let token = try await api.signIn().access
            let reply = try await api.call(.get, "/v1/audit?before=\(cursor)", token: token)
            #expect(reply.status == 400 && reply.code == "malformed_request", "\(cursor): \(reply.raw)")
        }
    }
}
