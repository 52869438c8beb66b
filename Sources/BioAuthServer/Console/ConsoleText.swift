import Foundation

/// The console's words in English and Simplified Chinese. The language is the `lang` cookie the switch sets, else the
/// browser's `Accept-Language` (any `zh` first gives Simplified Chinese), else English.
enum ConsoleLanguage: String, Sendable {
    case english = "en"
    case simplifiedChinese = "zh-Hans"

    /// The cookie the language switch sets (not a secret; `__Host-` keeps it to this origin).
    static let cookieName = "__Host-bioauth-console-lang"

    /// The language for a request: `?lang=`, then the cookie, then `Accept-Language`.
    static func of(query: String?, cookie: String?, acceptLanguage: String?) -> ConsoleLanguage {
        if let query, let chosen = ConsoleLanguage(rawValue: query) { return chosen }
        if let cookie, let chosen = ConsoleLanguage(rawValue: cookie) { return chosen }
        let ranges = (acceptLanguage ?? "").split(separator: ",").map {
            $0.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
        }
        for range in ranges {
            if range.hasPrefix("zh") { return .simplifiedChinese }
            if range.hasPrefix("en") { return .english }
        }
        return .english
    }

    /// The page's words, by key.
    var text: [String: String] { self == .english ? Self.englishText : Self.chineseText }

    /// One word or sentence.
    subscript(_ key: String) -> String { text[key] ?? Self.englishText[key] ?? key }

    /// A value from the data in this language: `word("status", "pending")` is the text of `status.pending`; a value
    /// without a translation (a kind a newer version added) shows as it is.
    func word(_ group: String, _ value: String) -> String { text["\(group).\(value)"] ?? Self.englishText["\(group).\(value)"] ?? value }

    /// Every key of the English text, for the test that Chinese has each.
    static var englishKeys: Set<String> { Set(englishText.keys) }
    /// Every key of the Chinese text.
    static var chineseKeys: Set<String> { Set(chineseText.keys) }

    private static let englishText: [String: String] = [
        "challenges": "Challenges issued to sign it", "challenge": "Challenge", "issued": "Issued", "used": "Used",
        "noChallenges": "None kept.", "challengeOpen": "not used yet", "challengeExpired": "expired unused",
        "challengesHint":
            "A phone asks for a challenge before its key signs the payment; retention deletes a challenge some time after it expired. Every signature, right or wrong, is in What happened.",
        "customerQuery": "Username, or any id the customer reads out",
        "customerQueryHint": "The start of a username in any case (Carol.L finds carol.li), or an account, device, payment, passkey or session id.",
        "matches": "Customers whose username starts so", "username": "Username", "open": "Open", "paymentDetails": "The payment",
        "memo": "Memo", "expires": "Expires", "failedAttempts": "Failed attempts", "authorizedBy": "Authorized by", "receipt": "Receipt",
        "receiptKey": "signed by key", "history": "What happened", "who": "Who",
        "noHistory": "Nothing recorded (payments made before this version have no history).",
        "webhookDeliveries": "Webhook deliveries of its events", "attempts": "Attempts", "lastAnswer": "Last answer", "delivered": "Delivered",
        "noDeliveries": "No webhook deliveries.", "concerns": "Concerns", "origin": "From", "noEvents": "No events.",
        "noPayment": "No such payment", "unknown": "not known", "serviceClientShort": "service client", "theCustomer": "the customer in the app",
        "failedAttempt": "failed authorization", "byPIN": "the payment PIN",
        "receiptVerifies": "verifies: signed by a published receipt key, and says this payment's amount and payee",
        "receiptFails": "DOES NOT VERIFY against the published receipt keys",
        "delivery.pending": "pending", "delivery.delivered": "delivered", "delivery.failed": "failed (given up)",
        "field.from": "from", "field.until": "until", "field.min": "smallest amount", "field.max": "largest amount",
        "failuresExplained":
            "Customers' requests the server refused and recorded in their security timeline: wrong passwords, PINs and signatures, replayed or late challenges, locks. Refusals that belong to no customer (unknown keys, malformed requests, rate limits) are not here: /metrics counts them as bioauth_problems_total.",
        "console": "BioAuth console", "customers": "Customers", "signOut": "Sign out", "signInTitle": "Operator sign-in",
        "enrollTitle": "Set up your second factor",
        "enrollText":
            "Scan this code with your authenticator app, or type the key, then sign in with your password and the 6-digit code the app shows.",
        "key": "Key:", "enrollLink": "The same as a link, for a phone with the app", "name": "Name", "password": "Password", "code": "Code",
        "signIn": "Sign in", "findCustomer": "Find a customer", "find": "Find",
        "noCustomer": "No customer with the username or account id", "account": "Account", "customerSince": "customer since",
        "locks": "Locks", "passwordSignIn": "Password sign-in:", "lockedUntil": "locked until", "notLocked": "not locked",
        "paymentPIN": "Payment PIN:", "reason": "Reason", "unlock": "Unlock the account", "clearPINLock": "Clear the PIN lock",
        "devices": "Devices", "device": "Device", "biometry": "Biometry", "registered": "Registered", "lastUsed": "Last used", "state": "State",
        "revoke": "Revoke", "noDevices": "No devices.", "liveSessions": "Live sessions", "session": "Session", "signInMethod": "Sign-in method",
        "installation": "Installation", "since": "Since", "noSessions": "No live sessions.", "endSessions": "End all sessions",
        "payments": "Payments", "payment": "Payment", "amount": "Amount", "payee": "Payee", "created": "Created", "cancel": "Cancel",
        "noPayments": "No payments.", "timeline": "Security timeline", "when": "When", "event": "Event", "outcome": "Outcome",
        "operatorAndReason": "Operator and reason", "active": "active", "revoked": "revoked", "yes": "yes", "no": "no",
        "passkeys": "Passkeys", "passkey": "Passkey", "passkeyKind": "Kind", "passkeySynced": "synced", "passkeyDeviceBound": "device-bound",
        "attestation": "Attestation", "noPasskeys": "No passkeys.", "done.passkey-revoked": "The passkey is revoked.",
        "done.revoked": "The device is revoked.", "done.sessions-ended": "Every session ended.", "done.unlocked": "The account is unlocked.",
        "done.pin-unlocked": "The PIN lock is cleared.", "done.cancelled": "The payment is cancelled.",
        "error.credentials": "The name, password or code is wrong.", "error.locked": "Too many failed sign-ins. Try again in 15 minutes at most.",
        "error.rateLimited": "Too many sign-in attempts from this address. Try again in a minute.",
        "error.viewer": "Viewers can only read.",
        "error.origin": "This form was sent from another site.",
        "error.csrf": "This form has expired or was not sent from the console. Open the page again.",
        "refused": "Refused", "notDone": "Not done", "notFound": "No such customer",
        "paymentSearch": "Find payments", "any": "any", "from": "From", "until": "Until",
        "amountHint":
            "Amounts in major units of the currency chosen (88 or 88.00 is ¥88.00). Dates in the console's time zone; until is exclusive. At most 100 payments, newest first.",
        "customer": "Customer", "error.search": "A filter is not valid:",
        "overview": "Overview", "signInsByHour": "Sign-ins in the last 24 hours, by hour", "totals": "In all:",
        "biometricLegend": "Face ID / Touch ID / Optic ID", "passkeyLegend": "passkey", "passwordLegend": "password", "failuresLegend": "failed",
        "failuresByCode": "Failures in the last 24 hours, by problem code", "count": "Count", "noFailures": "No failures.",
        "problemCode": "Problem code",
        "administration": "Administration", "operators": "Operators", "role": "Role", "disable": "Disable", "initialPassword": "Initial password",
        "createOperator": "Create operator", "disabled": "disabled", "totpPending": "TOTP not enrolled",
        "operatorHint":
            "The new operator chooses their own password, then enrolls their TOTP second factor, at their first sign-in. Give them the initial password in person.",
        "payees": "Payees", "verification": "Verification", "registeredBy": "Registered by", "noPayees": "No payees.",
        "unverified": "not verified by the bank", "registerPayee": "Register or rename", "serviceClients": "Service clients", "client": "Client",
        "scopes": "Scopes", "noClients": "No service clients.",
        "clientsHint": "Service clients are made and their secrets rotated with bioauth admin service, so a secret never shows in a browser.",
        "error.admin": "Only admins can do this.", "done.operator-created": "The operator is created.",
        "done.operator-disabled": "The operator is disabled.", "done.payee-registered": "The payee is registered.",
        "done.client-disabled": "The service client is disabled: its secrets and tokens stopped working.",
        "webhookEndpoints": "Webhook endpoints", "endpoint": "Endpoint", "events": "Events", "noEndpoints": "No webhook endpoints.",
        "qrLabel": "QR code of the key for your authenticator app",
        "changePassword": "Change password", "choosePasswordTitle": "Choose your password",
        "choosePasswordText":
            "Someone else chose the password you signed in with. Choose your own before anything else: from now on only you know it.",
        "changePasswordTitle": "Change your password",
        "changePasswordText":
            "Enter your current password and a code from your authenticator app, then the new password twice. Your other console sessions end.",
        "currentPassword": "Current password", "newPassword": "New password", "repeatPassword": "New password again", "savePassword": "Save password",
        "passwordRule": "At least 12 characters and at most 72 bytes, not the current one.",
        "error.passwordsDiffer": "The two new passwords differ.",
        "error.passwordRule": "The new password must be at least 12 characters and at most 72 bytes.",
        "error.passwordSame": "The new password must differ from the current one.",
        "error.currentCredentials": "The current password or the code is wrong.",
        "error.enrollCode": "That code is wrong. The key below is still the one to use: check the code in the app and try again.",
        "done.password-set": "Your password is set. Now set up your second factor: scan the code, then sign in with your new password and a code.",
        "done.password-changed": "Your password is changed.", "done.operator-enabled": "The operator is enabled again.",
        "done.operator-role-changed": "The operator's role is changed.",
        "done.operator-password-reset": "The password is reset: the operator signs in with the temporary password and chooses their own.",
        "done.operator-totp-reset": "The second factor is reset: the operator enrolls a new key at their next sign-in.",
        "passwordNotChosen": "password not yet chosen", "manage": "Manage", "enable": "Enable", "changeRole": "Change role",
        "resetPassword": "Reset password", "resetTOTP": "Reset second factor", "temporaryPassword": "Temporary password",
        "operatorChanges": "Changes to operators", "by": "By", "details": "Details", "noOperatorChanges": "No changes yet.",
        "time.justNow": "just now", "time.min.ago": "%d min ago", "time.min.ahead": "in %d min", "time.hours.ago": "%d h ago",
        "time.hours.ahead": "in %d h", "timesIn": "Times in",
        "role.viewer": "viewer", "role.support": "support", "role.admin": "admin",
        "status.pending": "pending", "status.authorized": "authorized", "status.cancelled": "cancelled", "status.expired": "expired",
        "status.locked": "locked",
        "method.password": "password", "method.biometric": "Face ID / Touch ID / Optic ID", "method.passkey": "passkey",
        "biometry.faceID": "Face ID", "biometry.touchID": "Touch ID", "biometry.opticID": "Optic ID", "biometry.none": "none",
        "verification.verified": "verified", "verification.unverified": "not verified",
        "outcome.success": "success", "outcome.failure": "failed",
        "kind.account_created": "account created", "kind.password_sign_in": "password sign-in", "kind.account_locked": "account locked",
        "kind.password_changed": "password changed", "kind.sign_out": "signed out", "kind.refresh_token_reuse": "refresh token reused",
        "kind.device_registered": "device registered", "kind.device_revoked": "device revoked",
        "kind.biometric_sign_in": "Face ID / Touch ID sign-in", "kind.challenge_replay": "challenge replayed",
        "kind.counter_regression": "device counter went back", "kind.payment_created": "payment requested",
        "kind.payment_authorized": "payment authorized", "kind.payment_cancelled": "payment cancelled", "kind.payment_locked": "payment locked",
        "kind.payment_pin_set": "payment PIN set", "kind.payment_pin_locked": "payment PIN locked", "kind.app_attestation": "App Attest key",
        "kind.app_assertion": "App Attest assertion", "kind.service_token_issued": "service token issued",
        "kind.payee_registered": "payee registered", "kind.webhook_endpoint_created": "webhook endpoint added",
        "kind.webhook_endpoint_deleted": "webhook endpoint removed", "kind.webhook_secret_rotated": "webhook secret rotated",
        "kind.sessions_ended": "all sessions ended", "kind.account_unlocked": "account unlocked",
        "kind.payment_pin_unlocked": "payment PIN lock cleared", "kind.operator_created": "operator created",
        "kind.operator_disabled": "operator disabled", "kind.operator_enabled": "operator enabled",
        "kind.operator_password_changed": "operator chose a password", "kind.operator_password_reset": "operator password reset",
        "kind.operator_totp_reset": "operator second factor reset", "kind.operator_role_changed": "operator role changed",
        "kind.service_client_disabled": "service client disabled", "kind.passkey_registered": "passkey registered",
        "kind.passkey_sign_in": "passkey sign-in", "kind.passkey_revoked": "passkey revoked",
    ]

    private static let chineseText: [String: String] = [
        "challenges": "为签名签发的挑战", "challenge": "挑战", "issued": "签发时间", "used": "使用时间",
        "noChallenges": "没有保留的挑战。", "challengeOpen": "尚未使用", "challengeExpired": "过期未用",
        "challengesHint": "手机在用密钥签名支付前先获取挑战；挑战过期一段时间后由数据保留任务删除。每次签名（无论对错）都记在处理记录中。",
        "customerQuery": "用户名，或客户报出的任意编号",
        "customerQueryHint": "用户名开头（不区分大小写，Carol.L 可找到 carol.li），或账户、设备、支付、通行密钥、会话编号。",
        "matches": "用户名以此开头的客户", "username": "用户名", "open": "打开", "paymentDetails": "支付详情",
        "memo": "附言", "expires": "过期时间", "failedAttempts": "失败次数", "authorizedBy": "授权方式", "receipt": "凭证",
        "receiptKey": "签名密钥", "history": "处理记录", "who": "操作方", "noHistory": "没有记录（此版本之前的支付没有处理记录）。",
        "webhookDeliveries": "相关事件的 Webhook 投递", "attempts": "尝试次数", "lastAnswer": "最近响应", "delivered": "送达时间",
        "noDeliveries": "没有 Webhook 投递。", "concerns": "涉及对象", "origin": "来源", "noEvents": "没有事件。",
        "noPayment": "没有此支付", "unknown": "未知", "serviceClientShort": "服务客户端", "theCustomer": "客户本人（App 内）",
        "failedAttempt": "授权失败", "byPIN": "支付密码",
        "receiptVerifies": "验证通过：由已公布的凭证密钥签名，且金额和收款方与此支付一致",
        "receiptFails": "验证未通过：与已公布的凭证密钥不符",
        "delivery.pending": "待投递", "delivery.delivered": "已送达", "delivery.failed": "失败（已放弃）",
        "field.from": "起始日期", "field.until": "截止日期", "field.min": "最小金额", "field.max": "最大金额",
        "failuresExplained": "服务器拒绝并记入客户安全时间线的请求：密码、支付密码或签名错误，挑战被重放或过期，锁定等。不属于任何客户的拒绝（未知密钥、格式错误的请求、频率限制）不在此列，由 /metrics 的 bioauth_problems_total 计数。",
        "console": "BioAuth 运营控制台", "customers": "客户", "signOut": "退出登录", "signInTitle": "运营人员登录",
        "enrollTitle": "设置第二重验证", "enrollText": "请用身份验证器应用扫描此二维码或输入密钥，然后用密码和应用显示的 6 位验证码登录。",
        "key": "密钥：", "enrollLink": "同一密钥的链接（在装有该应用的手机上打开）", "name": "用户名", "password": "密码", "code": "验证码",
        "signIn": "登录", "findCustomer": "查找客户", "find": "查找",
        "noCustomer": "没有此用户名或账户编号的客户", "account": "账户", "customerSince": "注册于", "locks": "锁定状态",
        "passwordSignIn": "密码登录：", "lockedUntil": "锁定至", "notLocked": "未锁定", "paymentPIN": "支付密码：", "reason": "原因",
        "unlock": "解锁账户", "clearPINLock": "解除支付密码锁定", "devices": "设备", "device": "设备", "biometry": "生物识别",
        "registered": "登记时间", "lastUsed": "最近使用", "state": "状态", "revoke": "撤销", "noDevices": "没有设备。", "liveSessions": "有效会话",
        "session": "会话", "signInMethod": "登录方式", "installation": "安装实例", "since": "开始时间", "noSessions": "没有有效会话。",
        "endSessions": "结束所有会话", "payments": "支付", "payment": "支付", "amount": "金额", "payee": "收款方", "created": "创建时间",
        "cancel": "取消", "noPayments": "没有支付。", "timeline": "安全时间线", "when": "时间", "event": "事件", "outcome": "结果",
        "operatorAndReason": "操作人员及原因", "active": "有效", "revoked": "已撤销", "yes": "是", "no": "否",
        "passkeys": "通行密钥", "passkey": "通行密钥", "passkeyKind": "类型", "passkeySynced": "已同步", "passkeyDeviceBound": "仅限单台设备",
        "attestation": "认证声明", "noPasskeys": "没有通行密钥。", "done.passkey-revoked": "通行密钥已撤销。",
        "done.revoked": "设备已撤销。", "done.sessions-ended": "所有会话已结束。", "done.unlocked": "账户已解锁。",
        "done.pin-unlocked": "支付密码锁定已解除。", "done.cancelled": "支付已取消。",
        "error.credentials": "用户名、密码或验证码错误。", "error.locked": "登录失败次数过多，请稍后再试（最多 15 分钟）。",
        "error.rateLimited": "此地址的登录尝试过多，请一分钟后再试。",
        "error.viewer": "只读角色不能执行操作。", "error.origin": "此表单来自其他网站。",
        "error.csrf": "此表单已过期或并非来自控制台，请重新打开页面。", "refused": "已拒绝", "notDone": "未完成", "notFound": "没有此客户",
        "paymentSearch": "查找支付", "any": "全部", "from": "起始日期", "until": "截止日期",
        "amountHint": "金额按所选币种的主单位填写（88 或 88.00 即 ¥88.00）。日期按控制台时区，截止日期不含当天。最多显示 100 笔，最新的在前。",
        "customer": "客户", "error.search": "筛选条件无效：",
        "overview": "概览", "signInsByHour": "最近 24 小时的登录（按小时）", "totals": "合计：",
        "biometricLegend": "面容 ID / 触控 ID / 视控 ID", "passkeyLegend": "通行密钥", "passwordLegend": "密码", "failuresLegend": "失败",
        "failuresByCode": "最近 24 小时的失败（按问题代码）", "count": "次数", "noFailures": "没有失败。",
        "problemCode": "问题代码",
        "administration": "管理", "operators": "运营人员", "role": "角色", "disable": "停用", "initialPassword": "初始密码",
        "createOperator": "创建运营人员", "disabled": "已停用", "totpPending": "未设置动态验证码",
        "operatorHint": "新运营人员首次登录时须先设置自己的密码，再绑定动态验证码。请当面告知其初始密码。", "payees": "收款方", "verification": "核验",
        "registeredBy": "登记者", "noPayees": "没有收款方。", "unverified": "银行未核验", "registerPayee": "登记或改名",
        "serviceClients": "服务客户端", "client": "客户端", "scopes": "权限范围", "noClients": "没有服务客户端。",
        "clientsHint": "服务客户端通过 bioauth admin service 创建和轮换密钥，密钥不会出现在浏览器中。", "error.admin": "只有管理员可以执行此操作。",
        "done.operator-created": "运营人员已创建。", "done.operator-disabled": "运营人员已停用。", "done.payee-registered": "收款方已登记。",
        "done.client-disabled": "服务客户端已停用：其密钥和令牌已失效。", "webhookEndpoints": "Webhook 端点", "endpoint": "端点",
        "events": "事件", "noEndpoints": "没有 Webhook 端点。",
        "qrLabel": "用身份验证器应用扫描的密钥二维码",
        "changePassword": "修改密码", "choosePasswordTitle": "设置您的密码",
        "choosePasswordText": "您登录所用的密码是他人为您设置的。请先设置您自己的密码，此后只有您知道它。",
        "changePasswordTitle": "修改您的密码",
        "changePasswordText": "请输入当前密码和身份验证器应用中的验证码，再输入两遍新密码。您在其他地方的控制台会话将结束。",
        "currentPassword": "当前密码", "newPassword": "新密码", "repeatPassword": "再次输入新密码", "savePassword": "保存密码",
        "passwordRule": "至少 12 个字符，最多 72 字节，且不能与当前密码相同。",
        "error.passwordsDiffer": "两次输入的新密码不一致。",
        "error.passwordRule": "新密码至少 12 个字符，最多 72 字节。",
        "error.passwordSame": "新密码不能与当前密码相同。",
        "error.currentCredentials": "当前密码或验证码错误。",
        "error.enrollCode": "验证码错误。下方密钥仍然有效，请核对应用中的验证码后重试。",
        "done.password-set": "密码已设置。请设置第二重验证：扫描二维码，然后用新密码和验证码登录。",
        "done.password-changed": "密码已修改。", "done.operator-enabled": "运营人员已重新启用。",
        "done.operator-role-changed": "运营人员的角色已更改。",
        "done.operator-password-reset": "密码已重置：该运营人员用临时密码登录后须设置自己的密码。",
        "done.operator-totp-reset": "第二重验证已重置：该运营人员下次登录时须重新绑定密钥。",
        "passwordNotChosen": "尚未设置自己的密码", "manage": "管理", "enable": "启用", "changeRole": "更改角色",
        "resetPassword": "重置密码", "resetTOTP": "重置第二重验证", "temporaryPassword": "临时密码",
        "operatorChanges": "运营人员变更记录", "by": "操作人", "details": "详情", "noOperatorChanges": "暂无变更。",
        "time.justNow": "刚刚", "time.min.ago": "%d 分钟前", "time.min.ahead": "%d 分钟后", "time.hours.ago": "%d 小时前",
        "time.hours.ahead": "%d 小时后", "timesIn": "时区：",
        "role.viewer": "只读", "role.support": "客服", "role.admin": "管理员",
        "status.pending": "待授权", "status.authorized": "已授权", "status.cancelled": "已取消", "status.expired": "已过期",
        "status.locked": "已锁定",
        "method.password": "密码", "method.biometric": "面容 ID / 触控 ID / 视控 ID", "method.passkey": "通行密钥",
        "biometry.faceID": "面容 ID", "biometry.touchID": "触控 ID", "biometry.opticID": "视控 ID", "biometry.none": "无",
        "verification.verified": "已核验", "verification.unverified": "未核验",
        "outcome.success": "成功", "outcome.failure": "失败",
        "kind.account_created": "开户", "kind.password_sign_in": "密码登录", "kind.account_locked": "账户锁定",
        "kind.password_changed": "修改密码", "kind.sign_out": "退出登录", "kind.refresh_token_reuse": "刷新令牌被重复使用",
        "kind.device_registered": "登记设备", "kind.device_revoked": "撤销设备",
        "kind.biometric_sign_in": "面容 ID / 触控 ID 登录", "kind.challenge_replay": "挑战被重放",
        "kind.counter_regression": "设备计数器回退", "kind.payment_created": "发起支付",
        "kind.payment_authorized": "授权支付", "kind.payment_cancelled": "取消支付", "kind.payment_locked": "支付锁定",
        "kind.payment_pin_set": "设置支付密码", "kind.payment_pin_locked": "支付密码锁定", "kind.app_attestation": "App Attest 密钥认证",
        "kind.app_assertion": "App Attest 断言", "kind.service_token_issued": "签发服务令牌",
        "kind.payee_registered": "登记收款方", "kind.webhook_endpoint_created": "添加 Webhook 端点",
        "kind.webhook_endpoint_deleted": "删除 Webhook 端点", "kind.webhook_secret_rotated": "轮换 Webhook 密钥",
        "kind.sessions_ended": "结束所有会话", "kind.account_unlocked": "解锁账户",
        "kind.payment_pin_unlocked": "解除支付密码锁定", "kind.operator_created": "创建运营人员",
        "kind.operator_disabled": "停用运营人员", "kind.operator_enabled": "启用运营人员",
        "kind.operator_password_changed": "运营人员设置密码", "kind.operator_password_reset": "重置运营人员密码",
        "kind.operator_totp_reset": "重置运营人员第二重验证", "kind.operator_role_changed": "更改运营人员角色",
        "kind.service_client_disabled": "停用服务客户端", "kind.passkey_registered": "登记通行密钥",
        "kind.passkey_sign_in": "通行密钥登录", "kind.passkey_revoked": "撤销通行密钥",
    ]
}
