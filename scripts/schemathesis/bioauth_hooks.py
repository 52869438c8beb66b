"""Schemathesis hooks for BioAuth, so that generated requests reach each operation's logic instead of stopping at 401.

Loaded by scripts/schemathesis.sh (SCHEMATHESIS_HOOKS=bioauth_hooks, this folder on PYTHONPATH). The server's address
is BIOAUTH_URL and its relying-party id BIOAUTH_RP_ID.

- Bearer tokens: most operations share one account (renewed every minute) that has a registered device key (made and
  signed here, as a phone would: docs/PROTOCOL.md), a payment PIN and a pending payment, so the contract's links lead
  from one operation's response to the next with data that exists. Operations that end or weaken a session (signing
  out, changing the password) get an account of their own, so they never take the shared token away.
- Service endpoints: `POST /oauth/token` gets the service client's id and secret (BIOAUTH_SERVICE_CLIENT_ID and _SECRET,
  made by scripts/schemathesis.sh) in HTTP Basic; the other service operations a service token from it. Half of the
  generated introspected `token` values become the shared account's live access token, and half of a service payment's
  `accountId` and `payeeId` the shared account's and a registered payee's, so the operations' logic runs.
- Key ids: where a body names a device key and the generated value is a well-formed key id, it is replaced by the
  shared account's key id half of the time, so challenges are issued and signatures are checked. A malformed value is
  left alone: negative tests stay negative.
- The half-of-the-time choices above come from a generator seeded with SCHEMATHESIS_SEED (the seed scripts/schemathesis.sh
  passes to schemathesis), so a failing run can be replayed with the same seed.
"""

import base64
import hashlib
import json
import os
import random
import secrets
import struct
import threading
import urllib.request

import schemathesis
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

BASE = os.environ["BIOAUTH_URL"].rstrip("/")
RP_ID = os.environ.get("BIOAUTH_RP_ID", "bioauth.local")
PASSWORD = "correct horse battery staple"
PIN = "258046"
# The hooks' own choices, seeded like schemathesis's run so that a run can be replayed.
_choices = random.Random(int(os.environ.get("SCHEMATHESIS_SEED", "20261123")))
# Operations whose tests would end the shared session or lock its account.
ISOLATED = {"DELETE /v1/sessions/current", "PUT /v1/me/password"}
# Operations of the service clients, with credentials of their own.
TOKEN_ENDPOINT = "POST /oauth/token"
# OpenID CIBA's request endpoint: client credentials in HTTP Basic, as at the token endpoint.
BACKCHANNEL = "POST /bc-authorize"
INTROSPECTION = "POST /oauth/introspect"
SERVICE_PAYMENT = "POST /v1/service/payments"
WEBHOOKS = {
    "POST /v1/service/webhook-endpoints", "GET /v1/service/webhook-endpoints", "DELETE /v1/service/webhook-endpoints/{endpointId}",
    "POST /v1/service/webhook-endpoints/{endpointId}/secret-rotations", "GET /v1/service/webhook-endpoints/{endpointId}/deliveries",
}
SERVICE = {TOKEN_ENDPOINT, BACKCHANNEL, INTROSPECTION, SERVICE_PAYMENT, "POST /v1/service/payees", "POST /v1/service/binding-codes",
           "POST /v1/service/password-reset-codes"} | WEBHOOKS
REGISTERED_PAYEE = "st-coffee-1"
CLIENT_ID = os.environ.get("BIOAUTH_SERVICE_CLIENT_ID", "")
CLIENT_SECRET = os.environ.get("BIOAUTH_SERVICE_CLIENT_SECRET", "")
# Operations whose body (or body.biometric) names a device key.
KEY_BODIES = {
    "POST /v1/sessions/biometric/challenges",
    "POST /v1/sessions/biometric",
    "POST /v1/me/payment-pin/challenges",
    "PUT /v1/me/payment-pin",
    "POST /v1/payments/{paymentId}/challenges",
    "POST /v1/payments/{paymentId}/biometric-authorization",
}


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def call(method, path, body=None, token=None, headers=None):
    all_headers = {"Content-Type": "application/json", **(headers or {})}
    if token:
        all_headers["Authorization"] = f"Bearer {token}"
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(BASE + path, data=data, method=method, headers=all_headers)
    with urllib.request.urlopen(request, timeout=30) as response:
        raw = response.read()
        return json.loads(raw) if raw else None


def field(value):
    """A canonical field: u16 big-endian length, then the bytes."""
    return struct.pack(">H", len(value)) + value


def register_payload(challenge, key_id):
    """The bytes a device key signs to register (docs/PROTOCOL.md, "Signed payload")."""
    return (b"BIOAUTH\x00" + bytes([1]) + field(b"register") + field(RP_ID.encode()) + field(challenge)
            + field(key_id) + struct.pack(">Q", 0) + field(b""))


def signed_in_account(with_device=False):
    """A new account signed in with its password. With a device: a registered key, a PIN and a pending payment."""
    username = "st-" + secrets.token_hex(8)
    call("POST", "/v1/accounts", {"username": username, "password": PASSWORD})
    token = call("POST", "/v1/sessions", {"username": username, "password": PASSWORD, "installationId": "schemathesis"})["accessToken"]
    account = {"token": token, "key_id": None, "id": call("GET", "/v1/me", token=token)["accountId"]}
    if with_device:
        key = ec.generate_private_key(ec.SECP256R1())
        public = key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
        key_id = hashlib.sha256(public).digest()
        challenge = call("POST", "/v1/devices/challenges", token=token)
        payload = register_payload(base64.urlsafe_b64decode(challenge["challenge"] + "=="), key_id)
        call("POST", "/v1/devices", {
            "challengeId": challenge["challengeId"], "publicKey": b64url(public), "keyId": b64url(key_id),
            "biometryKind": "faceID", "deviceName": "Schemathesis Phone", "counter": 0,
            "signature": b64url(key.sign(payload, ec.ECDSA(hashes.SHA256()))),
        }, token=token)
        call("PUT", "/v1/me/payment-pin", {"pin": PIN, "currentPassword": PASSWORD}, token=token)
        call("POST", "/v1/payments", {"amountMinor": 8800, "currency": "CNY", "payeeId": "coffee-1"},
             token=token, headers={"Idempotency-Key": secrets.token_hex(8)})
        account["key_id"] = b64url(key_id)
    return account


_shared = {"account": None}
_lock = threading.Lock()


def client_basic():
    return "Basic " + base64.b64encode(f"{CLIENT_ID}:{CLIENT_SECRET}".encode()).decode()


def service_token():
    request = urllib.request.Request(
        BASE + "/oauth/token", data=b"grant_type=client_credentials", method="POST",
        headers={"Content-Type": "application/x-www-form-urlencoded", "Authorization": client_basic()})
    with urllib.request.urlopen(request) as response:
        return json.loads(response.read())["access_token"]


@schemathesis.auth(
    refresh_interval=60,
    cache_by_key=lambda case, ctx: case.operation.label if case.operation.label in ISOLATED | SERVICE else "shared")
class BearerToken:
    def get(self, case, ctx):
        if case.operation.label in (TOKEN_ENDPOINT, BACKCHANNEL):
            return client_basic()
        if case.operation.label in SERVICE:
            token = service_token()
            call("POST", "/v1/service/payees", {"payeeId": REGISTERED_PAYEE, "name": "Tea Garden", "verification": "verified"}, token=token)
            return "Bearer " + token
        if case.operation.label in ISOLATED:
            return signed_in_account()["token"]
        account = signed_in_account(with_device=True)
        with _lock:
            _shared["account"] = account
        return account["token"]

    def set(self, case, data, ctx):
        case.headers = case.headers or {}
        case.headers["Authorization"] = data if data.startswith(("Basic ", "Bearer ")) else f"Bearer {data}"


def _is_key_id(value):
    return isinstance(value, str) and len(value) == 43 and all(c.isalnum() or c in "-_" for c in value)


@schemathesis.hook
def map_body(ctx, body):
    if ctx.operation is not None and ctx.operation.label == INTROSPECTION and isinstance(body, dict) and _choices.random() < 0.5:
        with _lock:
            account = _shared["account"]
        if account is not None and isinstance(body.get("token"), str):
            body["token"] = account["token"]
        return body
    if ctx.operation is not None and ctx.operation.label == SERVICE_PAYMENT and isinstance(body, dict) and _choices.random() < 0.5:
        with _lock:
            account = _shared["account"]
        if account is not None and isinstance(body.get("accountId"), str) and isinstance(body.get("payeeId"), str):
            body["accountId"] = account["id"]
            body["payeeId"] = REGISTERED_PAYEE
        return body
    if ctx.operation is None or ctx.operation.label not in KEY_BODIES or not isinstance(body, dict):
        return body
    with _lock:
        account = _shared["account"]
    if account is None or account["key_id"] is None or _choices.random() < 0.5:
        return body
    targets = [body] + ([body["biometric"]] if isinstance(body.get("biometric"), dict) else [])
    for target in targets:
        if _is_key_id(target.get("keyId")):
            target["keyId"] = account["key_id"]
    return body
