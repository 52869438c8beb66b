import Foundation
import Logging
import SQLKit

/// The schema, as numbered migrations applied in order at start-up, each in its own transaction.
///
/// The SQL uses only what SQLite and PostgreSQL both accept: TEXT, BIGINT and INTEGER columns, times as
/// BIGINT milliseconds since 1970, binary values as base64url TEXT, no autoincrement. Never edit a
/// migration that has shipped; add the next one.
enum Migrations {
    static let all: [(version: Int, name: String, statements: [String])] = [
        (
            1, "accounts, sessions, devices, challenges, audit",
            [
                """
                CREATE TABLE accounts (
                    id TEXT PRIMARY KEY,
                    username TEXT NOT NULL UNIQUE,
                    password_hash TEXT NOT NULL,
                    failed_password_attempts INTEGER NOT NULL,
                    locked_until BIGINT,
                    created_at BIGINT NOT NULL,
                    password_changed_at BIGINT NOT NULL
                )
                """,
                """
                CREATE TABLE devices (
                    id TEXT PRIMARY KEY,
                    account_id TEXT NOT NULL REFERENCES accounts (id),
                    key_id TEXT NOT NULL UNIQUE,
                    public_key TEXT NOT NULL,
                    biometry_kind TEXT NOT NULL,
                    name TEXT NOT NULL,
                    installation_id TEXT NOT NULL,
                    counter BIGINT NOT NULL,
                    attestation TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    last_used_at BIGINT,
                    revoked_at BIGINT
                )
                """,
                "CREATE INDEX devices_by_account ON devices (account_id)",
                """
                CREATE TABLE sessions (
                    id TEXT PRIMARY KEY,
                    account_id TEXT NOT NULL REFERENCES accounts (id),
                    installation_id TEXT NOT NULL,
                    device_id TEXT REFERENCES devices (id),
                    method TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    ended_at BIGINT,
                    end_reason TEXT
                )
                """,
                "CREATE INDEX sessions_by_account_installation ON sessions (account_id, installation_id)",
                """
                CREATE TABLE access_tokens (
                    token_hash TEXT PRIMARY KEY,
                    session_id TEXT NOT NULL REFERENCES sessions (id),
                    expires_at BIGINT NOT NULL
                )
                """,
                """
                CREATE TABLE refresh_tokens (
                    token_hash TEXT PRIMARY KEY,
                    session_id TEXT NOT NULL REFERENCES sessions (id),
                    expires_at BIGINT NOT NULL,
                    rotated_at BIGINT
                )
                """,
                """
                CREATE TABLE challenges (
                    id TEXT PRIMARY KEY,
                    purpose TEXT NOT NULL,
                    challenge TEXT NOT NULL,
                    account_id TEXT NOT NULL REFERENCES accounts (id),
                    session_id TEXT REFERENCES sessions (id),
                    device_id TEXT REFERENCES devices (id),
                    payment_id TEXT,
                    created_at BIGINT NOT NULL,
                    expires_at BIGINT NOT NULL,
                    consumed_at BIGINT
                )
                """,
                """
                CREATE TABLE audit_events (
                    id TEXT PRIMARY KEY,
                    occurred_at BIGINT NOT NULL,
                    sequence BIGINT NOT NULL,
                    kind TEXT NOT NULL,
                    outcome TEXT NOT NULL,
                    account_id TEXT,
                    device_id TEXT,
                    session_id TEXT,
                    code TEXT
                )
                """,
                "CREATE INDEX audit_events_by_account ON audit_events (account_id, occurred_at)",
                "CREATE INDEX audit_events_by_sequence ON audit_events (sequence)",
            ]
        ),
        (
            2, "payments, idempotency keys, payment PINs",
            [
                """
                CREATE TABLE payments (
                    id TEXT PRIMARY KEY,
                    account_id TEXT NOT NULL REFERENCES accounts (id),
                    amount_minor BIGINT NOT NULL,
                    currency TEXT NOT NULL,
                    payee_id TEXT NOT NULL,
                    payee_name TEXT NOT NULL,
                    memo TEXT,
                    status TEXT NOT NULL,
                    failed_attempts INTEGER NOT NULL,
                    created_at BIGINT NOT NULL,
                    expires_at BIGINT NOT NULL,
                    authorized_at BIGINT,
                    authorization_method TEXT,
                    device_id TEXT REFERENCES devices (id),
                    receipt TEXT
                )
                """,
                "CREATE INDEX payments_by_account ON payments (account_id, created_at)",
                """
                CREATE TABLE idempotency_keys (
                    account_id TEXT NOT NULL REFERENCES accounts (id),
                    idempotency_key TEXT NOT NULL,
                    request_hash TEXT NOT NULL,
                    payment_id TEXT NOT NULL REFERENCES payments (id),
                    response TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    PRIMARY KEY (account_id, idempotency_key)
                )
                """,
                """
                CREATE TABLE payment_pins (
                    account_id TEXT PRIMARY KEY REFERENCES accounts (id),
                    pin_hash TEXT NOT NULL,
                    failed_attempts INTEGER NOT NULL,
                    locked_until BIGINT,
                    updated_at BIGINT NOT NULL
                )
                """,
            ]
        ),
        (
            3, "App Attest keys",
            [
                """
                CREATE TABLE app_attest_keys (
                    device_id TEXT PRIMARY KEY REFERENCES devices (id),
                    key_id TEXT NOT NULL UNIQUE,
                    public_key TEXT NOT NULL,
                    app_id TEXT NOT NULL,
                    environment TEXT NOT NULL,
                    counter BIGINT NOT NULL,
                    receipt TEXT NOT NULL,
                    created_at BIGINT NOT NULL
                )
                """
            ]
        ),
        (
            4, "rate limits",
            [
                """
                CREATE TABLE rate_limits (
                    bucket TEXT PRIMARY KEY,
                    window_start BIGINT NOT NULL,
                    hits INTEGER NOT NULL
                )
                """
            ]
        ),
        (5, "audit sequence on PostgreSQL", []),
        (
            6, "indexes for live sessions and a session's access tokens",
            [
                // Ending an installation's live session read every session it ever had (the index covered
                // ended ones too), so each sign-in cost more than the last; only live sessions are indexed now.
                "CREATE INDEX IF NOT EXISTS sessions_live_by_account_installation ON sessions (account_id, installation_id) WHERE ended_at IS NULL",
                "DROP INDEX IF EXISTS sessions_by_account_installation",
                // A refresh deletes the session's access tokens: without this it read the whole table.
                // `IF NOT EXISTS`, so that operators of a large PostgreSQL database can build both indexes
                // beforehand with CREATE INDEX CONCURRENTLY (docs/DEPLOYMENT.md).
                "CREATE INDEX IF NOT EXISTS access_tokens_by_session ON access_tokens (session_id)",
            ]
        ),
        (
            7, "retention: leases and the indexes the purge reads",
            [
                // Which instance runs the retention job (one at a time when several share PostgreSQL).
                "CREATE TABLE maintenance_leases (name TEXT PRIMARY KEY, holder TEXT NOT NULL, expires_at BIGINT NOT NULL)",
                // Each purge finds what has aged out through an index instead of reading the whole table.
                "CREATE INDEX IF NOT EXISTS challenges_by_expiry ON challenges (expires_at)",
                "CREATE INDEX IF NOT EXISTS access_tokens_by_expiry ON access_tokens (expires_at)",
                "CREATE INDEX IF NOT EXISTS refresh_tokens_by_expiry ON refresh_tokens (expires_at)",
                "CREATE INDEX IF NOT EXISTS refresh_tokens_by_session ON refresh_tokens (session_id)",
                "CREATE INDEX IF NOT EXISTS sessions_by_end ON sessions (ended_at) WHERE ended_at IS NOT NULL",
                "CREATE INDEX IF NOT EXISTS idempotency_keys_by_age ON idempotency_keys (created_at)",
                "CREATE INDEX IF NOT EXISTS audit_events_by_time ON audit_events (occurred_at)",
                "CREATE INDEX IF NOT EXISTS rate_limits_by_window ON rate_limits (window_start)",
            ]
        ),
        (
            8, "receipt keys, published with their validity so receipts verify after a rotation",
            [
                // Public halves only: the signing key stays in its file, outside the database.
                "CREATE TABLE receipt_keys (key_id TEXT PRIMARY KEY, public_key TEXT NOT NULL, not_before BIGINT NOT NULL, retired_at BIGINT)"
            ]
        ),
        (
            9, "service clients (OAuth client credentials), their secrets and tokens; when access tokens were issued",
            [
                "CREATE TABLE service_clients (id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE, scopes TEXT NOT NULL, created_at BIGINT NOT NULL, disabled_at BIGINT)",
                // Hashes only (SHA-256 of a 256-bit random secret). Two rows for one client while a secret is rotated.
                """
                CREATE TABLE service_client_secrets (
                    secret_hash TEXT PRIMARY KEY, client_id TEXT NOT NULL REFERENCES service_clients (id), created_at BIGINT NOT NULL)
                """,
                "CREATE INDEX service_client_secrets_by_client ON service_client_secrets (client_id)",
                """
                CREATE TABLE service_tokens (
                    token_hash TEXT PRIMARY KEY, client_id TEXT NOT NULL REFERENCES service_clients (id), scopes TEXT NOT NULL,
                    issued_at BIGINT NOT NULL, expires_at BIGINT NOT NULL)
                """,
                "CREATE INDEX service_tokens_by_expiry ON service_tokens (expires_at)",
                "CREATE INDEX service_tokens_by_client ON service_tokens (client_id)",
                "ALTER TABLE access_tokens ADD COLUMN issued_at BIGINT",
                "ALTER TABLE audit_events ADD COLUMN client_id TEXT",
            ]
        ),
        (
            10, "payees registered by the bank",
            [
                """
                CREATE TABLE payees (
                    id TEXT PRIMARY KEY, name TEXT NOT NULL, verification TEXT NOT NULL, registered_by TEXT NOT NULL,
                    created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL)
                """
            ]
        ),
        (
            11, "webhook endpoints, their secrets, and the outbox of events with their deliveries and attempts",
            [
                """
                CREATE TABLE webhook_endpoints (
                    id TEXT PRIMARY KEY, client_id TEXT NOT NULL, url TEXT NOT NULL, events TEXT NOT NULL,
                    created_at BIGINT NOT NULL, deleted_at BIGINT)
                """,
                "CREATE INDEX webhook_endpoints_by_client ON webhook_endpoints (client_id)",
                """
                CREATE TABLE webhook_secrets (
                    id TEXT PRIMARY KEY, endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints (id), secret TEXT NOT NULL,
                    created_at BIGINT NOT NULL, expires_at BIGINT)
                """,
                "CREATE INDEX webhook_secrets_by_endpoint ON webhook_secrets (endpoint_id)",
                """
                CREATE TABLE webhook_events (
                    id TEXT PRIMARY KEY, type TEXT NOT NULL, created_at BIGINT NOT NULL, body TEXT NOT NULL)
                """,
                """
                CREATE TABLE webhook_deliveries (
                    event_id TEXT NOT NULL REFERENCES webhook_events (id), endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints (id),
                    status TEXT NOT NULL, attempts INTEGER NOT NULL, next_attempt_at BIGINT NOT NULL, give_up_at BIGINT NOT NULL,
                    lease_owner TEXT, lease_until BIGINT, last_status INTEGER, last_error TEXT, delivered_at BIGINT,
                    created_at BIGINT NOT NULL, PRIMARY KEY (event_id, endpoint_id))
                """,
                "CREATE INDEX webhook_deliveries_due ON webhook_deliveries (status, next_attempt_at)",
                "CREATE INDEX webhook_deliveries_by_endpoint ON webhook_deliveries (endpoint_id, created_at)",
                """
                CREATE TABLE webhook_attempts (
                    event_id TEXT NOT NULL, endpoint_id TEXT NOT NULL, attempt INTEGER NOT NULL, started_at BIGINT NOT NULL,
                    status_code INTEGER, latency_ms BIGINT NOT NULL, error TEXT, instance TEXT NOT NULL,
                    PRIMARY KEY (event_id, endpoint_id, attempt))
                """,
                // The expiry sweep finds pending payments past their time without reading the others.
                "CREATE INDEX IF NOT EXISTS payments_pending_expiry ON payments (expires_at) WHERE status = 'pending'",
            ]
        ),
        (
            12, "operators: the bank's support staff, and who did what, why, in the audit log",
            [
                "ALTER TABLE audit_events ADD COLUMN operator_id TEXT",
                "ALTER TABLE audit_events ADD COLUMN reason TEXT",
                """
                CREATE TABLE operators (
                    id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE, role TEXT NOT NULL, password_hash TEXT NOT NULL,
                    totp_secret TEXT, totp_pending_secret TEXT, totp_last_step BIGINT, failed_attempts INTEGER NOT NULL,
                    locked_until BIGINT, created_at BIGINT NOT NULL, created_by TEXT, disabled_at BIGINT)
                """,
                """
                CREATE TABLE operator_sessions (
                    token_hash TEXT PRIMARY KEY, operator_id TEXT NOT NULL REFERENCES operators (id), csrf_token TEXT NOT NULL,
                    created_at BIGINT NOT NULL, last_seen_at BIGINT NOT NULL, ended_at BIGINT)
                """,
            ]
        ),
        (
            13, "passkeys (WebAuthn credentials), their ceremonies' challenges, accounts' user handles, passkey sessions",
            [
                // A random 32-byte handle per account, made when its first passkey is: the authenticator stores it, so it
                // must say nothing about the account (not its id, not its username).
                "ALTER TABLE accounts ADD COLUMN user_handle TEXT",
                "CREATE UNIQUE INDEX accounts_by_user_handle ON accounts (user_handle)",
                """
                CREATE TABLE passkeys (
                    id TEXT PRIMARY KEY, account_id TEXT NOT NULL REFERENCES accounts (id), credential_id TEXT NOT NULL UNIQUE,
                    public_key TEXT NOT NULL, algorithm INTEGER NOT NULL, sign_count BIGINT NOT NULL, aaguid TEXT NOT NULL,
                    backup_eligible INTEGER NOT NULL, backed_up INTEGER NOT NULL, user_verified INTEGER NOT NULL,
                    attestation_format TEXT NOT NULL, attestation_type TEXT NOT NULL, attestation_trusted INTEGER NOT NULL,
                    transports TEXT NOT NULL, name TEXT NOT NULL, created_at BIGINT NOT NULL, last_used_at BIGINT, revoked_at BIGINT)
                """,
                "CREATE INDEX passkeys_by_account ON passkeys (account_id)",
                """
                CREATE TABLE passkey_challenges (
                    id TEXT PRIMARY KEY, ceremony TEXT NOT NULL, challenge TEXT NOT NULL, account_id TEXT, session_id TEXT,
                    created_at BIGINT NOT NULL, expires_at BIGINT NOT NULL, consumed_at BIGINT)
                """,
                "CREATE INDEX passkey_challenges_by_expiry ON passkey_challenges (expires_at)",
                "ALTER TABLE sessions ADD COLUMN passkey_id TEXT",
                "ALTER TABLE audit_events ADD COLUMN passkey_id TEXT",
            ]
        ),
        (
            14, "a service client's idempotency keys looked up by key, whatever the account",
            [
                // A client's keys are stored as " CLIENT KEY" (a space first, which no user's key holds) and are per client:
                // the same key for another account is a reuse, found through this index.
                "CREATE INDEX idempotency_keys_by_key ON idempotency_keys (idempotency_key)"
            ]
        ),
        (
            15, "whether a payment's payee was verified by the bank when the payment was made",
            // 1 verified, 0 not; NULL for payments made before this migration (not known).
            ["ALTER TABLE payments ADD COLUMN payee_verified INTEGER"]
        ),
        (
            16, "payee names unique by what a person sees: their two look-alike keys (DisplayName.lookalikeKeys)",
            // NULL until start-up fills them in (the keys are computed in Swift); a payee whose name looks like an earlier
            // one's keeps NULL, and is logged, until an operator renames it.
            [
                "ALTER TABLE payees ADD COLUMN name_key_folded TEXT",
                "ALTER TABLE payees ADD COLUMN name_key_mapped TEXT",
                "CREATE UNIQUE INDEX payees_by_name_key_folded ON payees (name_key_folded)",
                "CREATE UNIQUE INDEX payees_by_name_key_mapped ON payees (name_key_mapped)",
            ]
        ),
        (
            17, "operators set their own password; the console's timeline shows where a request came from; operator changes listed",
            [
                // The client address (as rate limits count it) and User-Agent of the request that caused an event.
                "ALTER TABLE audit_events ADD COLUMN client_address TEXT",
                "ALTER TABLE audit_events ADD COLUMN user_agent TEXT",
                // A payment's own history (its page in the console): its events, and its webhook events' deliveries.
                "ALTER TABLE audit_events ADD COLUMN payment_id TEXT",
                "CREATE INDEX audit_events_by_payment ON audit_events (payment_id) WHERE payment_id IS NOT NULL",
                "ALTER TABLE webhook_events ADD COLUMN subject_id TEXT",
                "CREATE INDEX webhook_events_by_subject ON webhook_events (subject_id) WHERE subject_id IS NOT NULL",
                "CREATE INDEX challenges_by_payment ON challenges (payment_id) WHERE payment_id IS NOT NULL",
                "ALTER TABLE operators ADD COLUMN must_change_password INTEGER NOT NULL DEFAULT 0",
                // Operators who never completed a sign-in still hold the password an admin chose for them.
                "UPDATE operators SET must_change_password = 1 WHERE totp_secret IS NULL",
                // The admin page's list of operator changes, without reading the customers' events.
                "CREATE INDEX audit_events_operator_changes ON audit_events (occurred_at) WHERE kind IN \(AuditEventsTable.operatorChangeKinds)",
            ]
        ),
        (
            18, "approval requests: a sign-in or an operation that started elsewhere, approved on the phone (CIBA, scan to sign in)",
            [
                // auth_req_hash: SHA-256 of the CIBA auth_req_id (the id itself is a bearer secret of the client, 256 bits).
                // number_choices: the three numbers the phone offers for a sign-in, the right one among them.
                """
                CREATE TABLE approvals (
                    id TEXT PRIMARY KEY, account_id TEXT NOT NULL REFERENCES accounts (id), kind TEXT NOT NULL,
                    client_id TEXT, requester TEXT NOT NULL, binding_message TEXT, channel_browser TEXT, channel_platform TEXT,
                    channel_address TEXT, match_number INTEGER, number_choices TEXT, challenge TEXT NOT NULL, status TEXT NOT NULL,
                    created_at BIGINT NOT NULL, expires_at BIGINT NOT NULL, answered_at BIGINT, device_id TEXT, deny_reason TEXT,
                    signed_approval TEXT, auth_req_hash TEXT, delivery_mode TEXT NOT NULL, notification_token TEXT,
                    poll_interval INTEGER NOT NULL, next_poll_at BIGINT, redeemed_at BIGINT, session_id TEXT)
                """,
                "CREATE INDEX approvals_by_account ON approvals (account_id, created_at)",
                "CREATE UNIQUE INDEX approvals_by_auth_req ON approvals (auth_req_hash)",
                "CREATE INDEX approvals_pending_by_expiry ON approvals (expires_at) WHERE status = 'pending'",
                // The name the phone shows for a service client ("Bank Call Centre").
                "ALTER TABLE service_clients ADD COLUMN display_name TEXT",
            ]
        ),
        (
            19, "QR codes that sign a web page in once the customer's phone approves (scan to sign in)",
            [
                // code_hash: SHA-256 of the code in the QR; browser_hash: SHA-256 of the cookie set with it, which the page
                // must present to collect the session. approval_id: the request made when a phone scanned it.
                """
                CREATE TABLE qr_sign_ins (
                    id TEXT PRIMARY KEY, code_hash TEXT NOT NULL UNIQUE, browser_hash TEXT NOT NULL, channel_browser TEXT,
                    channel_platform TEXT, channel_address TEXT, match_number INTEGER NOT NULL, created_at BIGINT NOT NULL,
                    expires_at BIGINT NOT NULL, approval_id TEXT, scanned_at BIGINT)
                """,
                "CREATE INDEX qr_sign_ins_by_expiry ON qr_sign_ins (expires_at)",
            ]
        ),
        (
            20, "OpenID CIBA's ping mode: a client's notification endpoint, and the pings owed to it",
            [
                "ALTER TABLE service_clients ADD COLUMN notification_endpoint TEXT",
                // One row per ping-mode request: the auth_req_id and client_notification_token, sealed with the webhook
                // sealer (the client needs them back in the ping); due once the request is answered or expired.
                """
                CREATE TABLE ciba_pings (
                    approval_id TEXT PRIMARY KEY, client_id TEXT NOT NULL, sealed TEXT NOT NULL, attempts INTEGER NOT NULL,
                    next_attempt_at BIGINT, give_up_at BIGINT NOT NULL, delivered_at BIGINT, last_error TEXT)
                """,
                "CREATE INDEX ciba_pings_due ON ciba_pings (next_attempt_at) WHERE next_attempt_at IS NOT NULL AND delivered_at IS NULL",
            ]
        ),
        (
            21, "approvals keep no notification token: a ping-mode request's is sealed in ciba_pings",
            ["ALTER TABLE approvals DROP COLUMN notification_token"]
        ),
        // PostgreSQL's own (postgresOnly): SQLite plans the authorizing UPDATE on the primary key already, and does not
        // see that a bound expiry implies `expires_at IS NOT NULL`.
        (22, "on PostgreSQL, the index of pending payments serves only statements that bound their expiry", []),
        (
            23, "challenges by session: the foreign key's check when the retention purge deletes a session",
            [
                // Deleting a session makes the engine look for challenges that refer to it; without an index that read the
                // whole challenges table for each session deleted (two million sessions did not purge in an hour on
                // PostgreSQL). Partial: sign-in challenges, most of them, have no session and add nothing to it.
                "CREATE INDEX IF NOT EXISTS challenges_by_session ON challenges (session_id) WHERE session_id IS NOT NULL"
            ]
        ),
        (
            24, "the retention purge finds each batch through an index: approvals, CIBA pings and webhook events by age",
            [
                // Without them a batch read its table from the start until it had found its rows: on a table that keeps
                // most of its rows (approvals for the audit retention, deliveries for 30 days) every batch read more than
                // the one before, and a day's backlog cost the square of its size (docs/PERFORMANCE.md).
                "CREATE INDEX IF NOT EXISTS approvals_by_expiry ON approvals (expires_at)",
                "CREATE INDEX IF NOT EXISTS ciba_pings_by_give_up ON ciba_pings (give_up_at)",
                // Partial: a pending delivery is never purged, and the index changes only when a delivery ends.
                "CREATE INDEX IF NOT EXISTS webhook_deliveries_ended ON webhook_deliveries (created_at) WHERE status <> 'pending'",
                "CREATE INDEX IF NOT EXISTS webhook_events_by_creation ON webhook_events (created_at)",
            ]
        ),
        // PostgreSQL's own (postgresOnly): SQLite gives a file's pages back only when asked (VACUUM), never on its own.
        (25, "on PostgreSQL, autovacuum keeps the pages of the tables every sign-in uses instead of shrinking them under an exclusive lock", []),
        // The admin page shows it; console sessions are purged, so their times do not say it for long.
        (26, "operators: when each last signed in to the console", ["ALTER TABLE operators ADD COLUMN last_sign_in_at BIGINT"]),
        (
            27, "device binding by policy: how each device was bound and its cooling-off, binding and reset codes, and bind_device approvals",
            [
                // bound_by: password, approval, binding_code (docs/PROTOCOL.md, "Binding a device"). Devices bound before this
                // migration were bound by a password; they are not put in a cooling-off they never had.
                "ALTER TABLE devices ADD COLUMN bound_by TEXT NOT NULL DEFAULT 'password'",
                "ALTER TABLE devices ADD COLUMN cooling_off_until BIGINT",
                // code_hash: SHA-256 of the code (at least 120 random bits, so no pepper or slow hash is needed); one account,
                // used once, within its lifetime. client_id: the service client that asked for it. purpose: bind, recovery (a
                // lost phone's code, whose binding revokes every other device, passkey and session of the account) or
                // password_reset (sets a new password; binds nothing).
                """
                CREATE TABLE binding_codes (
                    id TEXT PRIMARY KEY, account_id TEXT NOT NULL REFERENCES accounts(id), code_hash TEXT NOT NULL UNIQUE,
                    client_id TEXT, created_at BIGINT NOT NULL, expires_at BIGINT NOT NULL, used_at BIGINT, device_id TEXT,
                    purpose TEXT NOT NULL DEFAULT 'bind')
                """,
                "CREATE INDEX binding_codes_unused_by_account ON binding_codes (account_id) WHERE used_at IS NULL",
                "CREATE INDEX binding_codes_by_expiry ON binding_codes (expires_at)",
                // A bind_device approval is for one new key and the session that asked: only that session may bind that key with it.
                "ALTER TABLE approvals ADD COLUMN bind_session_id TEXT",
                "ALTER TABLE approvals ADD COLUMN bind_key_id TEXT",
            ]
        ),
        (
            28, "step-up: a session's latest fresh device-key signature, its level, device and action",
            [
                // step_up_at: when (ms); step_up_level: AssuranceLevel's raw value; step_up_action: the one sensitive action it
                // counts for, '' for all. Written only by a step-up; read only by sensitive operations and introspection.
                "ALTER TABLE sessions ADD COLUMN step_up_at BIGINT",
                "ALTER TABLE sessions ADD COLUMN step_up_level INTEGER",
                "ALTER TABLE sessions ADD COLUMN step_up_device_id TEXT",
                "ALTER TABLE sessions ADD COLUMN step_up_action TEXT",
            ]
        ),
    ]

    /// Statements only PostgreSQL runs, by migration. Audit events there take their sequence number from a
    /// sequence: reading MAX(sequence) in every transaction would make all concurrent writers conflict.
    static let postgresOnly: [Int: [String]] = [
        5: [
            "CREATE SEQUENCE audit_events_sequence",
            "SELECT setval('audit_events_sequence', COALESCE((SELECT MAX(sequence) FROM audit_events), 0) + 1, false)",
        ],
        // Support's search by the start of a username compares bytes (AccountsTable.prefixSearch); SQLite's unique index
        // on username already does.
        17: [#"CREATE INDEX accounts_by_username_bytes ON accounts (username COLLATE "C")"#],
        // The index's predicate names expires_at, which every statement that should read it bounds (the expiry sweep, the
        // pending list) and the authorizing UPDATE (by id and status alone) does not: PostgreSQL planned that UPDATE on
        // the index, reading every pending payment, where the primary key finds one. expires_at is never NULL, so the
        // index holds the same rows as before.
        22: [
            "CREATE INDEX IF NOT EXISTS payments_pending_by_expiry ON payments (expires_at) WHERE status = 'pending' AND expires_at IS NOT NULL",
            "DROP INDEX IF EXISTS payments_pending_expiry",
        ],
        // A vacuum that finds empty pages at a table's end gives them back to the system, holding the table's exclusive lock
        // while it does: after a purge, every request that reads a token or starts a session waited on it (p99 during the
        // purge's sessions' phase 110-244 ms with it, 60 and 81 ms without, docs/PERFORMANCE.md). These tables are written
        // by every sign-in, so their freed pages are filled again anyway. `ALTER TABLE … RESET (vacuum_truncate)` undoes it.
        25: ["challenges", "access_tokens", "refresh_tokens", "sessions"].map { "ALTER TABLE \($0) SET (vacuum_truncate = false)" },
    ]

    /// Applies the migrations the database has not seen yet, all in one transaction. On PostgreSQL the
    /// transaction first takes an advisory lock, so instances starting together apply each migration once.
    static func run(on executor: any DatabaseExecutor, logger: Logger) async throws {
        let applied = try await executor.transaction { db -> [Int] in
            if executor.dialect == .postgres {
                try await db.raw("SELECT pg_advisory_xact_lock(\(literal: Self.lockKey))").run()
            }
            try await db.raw(
                "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)"
            ).run()
            let done = try await db.select().column("version").from("schema_migrations").all().map { try $0.decode(column: "version", as: Int.self) }
            var applied: [Int] = []
            for migration in all where !done.contains(migration.version) {
                for statement in migration.statements { try await db.raw(SQLQueryString(statement)).run() }
                if executor.dialect == .postgres {
                    for statement in postgresOnly[migration.version] ?? [] { try await db.raw(SQLQueryString(statement)).run() }
                }
                try await db.insert(into: "schema_migrations")
                    .columns("version", "name", "applied_at")
                    .values(SQLBind(migration.version), SQLBind(migration.name), SQLBind(Date().millisecondsSince1970))
                    .run()
                applied.append(migration.version)
            }
            return applied
        }
        for version in applied {
            logger.info("applied migration \(version): \(all.first { $0.version == version }?.name ?? "")")
        }
    }

    /// The advisory lock migrations take on PostgreSQL ("BIOAUTH" in ASCII).
    static let lockKey = 0x42_49_4F_41_55_54_48
}
