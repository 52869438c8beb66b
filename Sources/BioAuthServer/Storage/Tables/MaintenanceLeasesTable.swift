import Foundation
import SQLKit

extension SQLDatabase {
    /// `maintenance_leases`: which instance runs a piece of background maintenance, until when.
    var maintenanceLeases: MaintenanceLeasesTable { MaintenanceLeasesTable(db: self) }
}

/// The statements on `maintenance_leases`.
struct MaintenanceLeasesTable: Table {
    let db: any SQLDatabase

    /// Claims (or renews) the lease `name` for `holder` until `until`, in one statement that succeeds when the lease is
    /// free, has run out at `now`, or is the holder's already.
    func claim(_ name: String, holder: String, now: Int64, until: Int64) async throws -> Bool {
        try await db.raw(
            """
            INSERT INTO maintenance_leases (name, holder, expires_at) VALUES (\(bind: name), \(bind: holder), \(bind: until))
            ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
            WHERE maintenance_leases.expires_at < \(bind: now) OR maintenance_leases.holder = excluded.holder
            RETURNING holder
            """
        ).first() != nil
    }

    /// Gives the lease `name` up, if `holder` still holds it.
    func release(_ name: String, holder: String) async throws {
        try await db.update("maintenance_leases").set("expires_at", to: 0).where("name", .equal, name).where("holder", .equal, holder).run()
    }
}
