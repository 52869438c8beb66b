#!/usr/bin/env python3
"""An OpenID CIBA client and a phone written from docs/PROTOCOL.md alone (Python's standard library and `cryptography`),
run against a live `bioauth serve` by scripts/outside-client.sh. It shows that the protocol as documented is enough:

- the bank's backend asks through POST /bc-authorize and polls the token endpoint with the CIBA grant, reading OAuth's
  `error` member (authorization_pending, slow_down, access_denied, expired_token, invalid_grant);
- the phone lists its approval requests, builds the canonical approval of what it shows, signs the `approval` payload
  with its P-256 device key and answers;
- the backend verifies the signed approval offline with the published receipt key, and for a sign-in uses the session;
- binding by policy ("Binding a device"): the first phone binds with a binding code the bank's backend asks for, a second
  phone's password alone binds nothing, the first phone approves it with the number it shows, and a third binds with
  another code;
- step-up ("Step-up"): a sensitive operation refused for a password session (401 step_up_required with RFC 9470's
  WWW-Authenticate), the phone's `stepup` signature over the canonical step-up, the operation then done; and a bank's
  resource server (resource_server.py) that enforces RFC 9470 over introspection, answered the same way.

Usage: ciba_client.py BASE_URL CLIENT_ID CLIENT_SECRET RELYING_PARTY_ID BINDING_CLIENT_ID BINDING_CLIENT_SECRET RESOURCE_SERVER_URL
"""
import base64
import hashlib
import json
import struct
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

BASE, CLIENT_ID, CLIENT_SECRET, RP_ID, BINDING_ID, BINDING_SECRET, RESOURCE_SERVER = sys.argv[1:8]


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def field(value: bytes) -> bytes:
    return struct.pack(">H", len(value)) + value


def request(method, path, json_body=None, form=None, token=None, basic=False, client=None, base=None, headers_out=None):
    headers = {"Accept": "application/json"}
    data = None
    if json_body is not None:
        headers["Content-Type"] = "application/json"
        data = json.dumps(json_body).encode()
    if form is not None:
        headers["Content-Type"] = "application/x-www-form-urlencoded"
        data = urllib.parse.urlencode(form).encode()
    if token:
        headers["Authorization"] = "Bearer " + token
    if basic:
        client_id, secret = client or (CLIENT_ID, CLIENT_SECRET)
        credentials = urllib.parse.quote(client_id, safe="") + ":" + urllib.parse.quote(secret, safe="")
        headers["Authorization"] = "Basic " + base64.b64encode(credentials.encode()).decode()
    req = urllib.request.Request((base or BASE) + path, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(req, timeout=10) as response:
            body = response.read()
            if headers_out is not None:
                headers_out.update(response.headers)
            return response.status, (json.loads(body) if body else {})
    except urllib.error.HTTPError as error:
        if headers_out is not None:
            headers_out.update(error.headers)
        return error.code, json.loads(error.read() or b"{}")


def check(condition, message):
    if not condition:
        raise SystemExit("outside client: FAILED: " + message)
    print("outside client: ok:", message)


# The signed payload, version 1: "BIOAUTH" 0x00, version, purpose, relying party, challenge, key id, counter, hash.
def payload(purpose, challenge, key_id, counter, hash_=b""):
    return (b"BIOAUTH\x00" + bytes([1]) + field(purpose.encode()) + field(RP_ID.encode()) + field(challenge) + field(key_id)
            + struct.pack(">Q", counter) + field(hash_))


# The canonical approval, built from what the phone shows.
def canonical_approval(request_, number):
    channel = request_.get("channel") or {}
    return (b"BIOAUTH\x00" + bytes([1]) + field(b"approval") + field(request_["approvalId"].encode())
            + field(request_["kind"].encode()) + field(request_["requester"].encode())
            + field(request_.get("bindingMessage", "").encode()) + field(channel.get("browser", "").encode())
            + field(channel.get("platform", "").encode()) + field(channel.get("address", "").encode())
            + bytes([number if request_["kind"] in ("sign_in", "bind_device") else 0]) + struct.pack(">Q", request_["createdAtMs"]))


# The signed approval's bytes, from its members.
def approved_bytes(signed):
    approval = {
        "approvalId": signed["approvalId"], "kind": signed["kind"], "requester": signed["requester"],
        "bindingMessage": signed.get("bindingMessage", ""), "createdAtMs": signed["createdAtMs"],
        "channel": {"browser": signed.get("channelBrowser", ""), "platform": signed.get("channelPlatform", ""),
                    "address": signed.get("channelAddress", "")},
    }
    approval_hash = hashlib.sha256(canonical_approval(approval, signed.get("number", 0))).digest()
    return (b"BIOAUTH\x00" + bytes([1]) + field(b"approved") + field(unb64url(signed["keyId"])) + field(approval_hash)
            + field(signed["accountId"].encode()) + field(unb64url(signed["deviceKeyId"]))
            + field(" ".join(signed["amr"]).encode()) + struct.pack(">Q", signed["approvedAtMs"]))


def binding_code(account):
    """What the bank's backend does after its own check of the customer: a service token, then a binding code."""
    status, token = request("POST", "/oauth/token", form={"grant_type": "client_credentials"}, basic=True, client=(BINDING_ID, BINDING_SECRET))
    check(status == 200, "the bank's backend gets a service token with bindings:write")
    status, issued = request("POST", "/v1/service/binding-codes", {"accountId": account}, token=token["access_token"])
    check(status == 201 and len(issued["code"].replace("-", "")) == 25, "the backend gets a one-time binding code")
    return issued["code"]


class Phone:
    """The customer's phone: a P-256 key, a counter, the access token of a password sign-in on its installation."""

    def __init__(self, username, password, installation, create=False):
        if create:
            request("POST", "/v1/accounts", {"username": username, "password": password})
        status, tokens = request("POST", "/v1/sessions", {"username": username, "password": password, "installationId": installation})
        check(status == 201, f"{username} signs in with the password on {installation}")
        self.token = tokens["accessToken"]
        self.session_id = tokens["sessionId"]
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.public = self.key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
        self.key_id = hashlib.sha256(self.public).digest()
        self.counter = 0

    def register(self, **evidence):
        """POST /v1/devices with a fresh registration challenge and `approvalId` or `bindingCode` when given."""
        status, challenge = request("POST", "/v1/devices/challenges", token=self.token)
        signature = self.key.sign(payload("register", unb64url(challenge["challenge"]), self.key_id, 0), ec.ECDSA(hashes.SHA256()))
        body = {"challengeId": challenge["challengeId"], "publicKey": b64url(self.public), "keyId": b64url(self.key_id),
                "biometryKind": "faceID", "deviceName": "Python phone", "counter": 0, "signature": b64url(signature)}
        body.update(evidence)
        return request("POST", "/v1/devices", body, token=self.token)

    def step_up(self, action=""):
        """Step-up: a stepup challenge, then the key's signature over the canonical step-up of this session and action."""
        status, challenge = request("POST", "/v1/sessions/current/step-up/challenges", {"keyId": b64url(self.key_id)}, token=self.token)
        check(status == 201 and challenge["purpose"] == "stepup", "the phone gets a stepup challenge for its session")
        self.counter += 1
        step_up = b"BIOAUTH\x00" + bytes([1]) + field(b"stepup") + field(self.session_id.encode()) + field(action.encode())
        signed = payload("stepup", unb64url(challenge["challenge"]), self.key_id, self.counter, hashlib.sha256(step_up).digest())
        body = {"challengeId": challenge["challengeId"], "keyId": b64url(self.key_id), "counter": self.counter,
                "signature": b64url(self.key.sign(signed, ec.ECDSA(hashes.SHA256())))}
        if action:
            body["action"] = action
        return request("POST", "/v1/sessions/current/step-up", body, token=self.token)

    def pending(self):
        status, listed = request("GET", "/v1/approvals?status=pending", token=self.token)
        check(status == 200, "the phone lists its pending requests")
        return listed["approvals"]

    def approve(self, request_, number=None):
        self.counter += 1
        approval_hash = hashlib.sha256(canonical_approval(request_, number or 0)).digest()
        signed = payload("approval", unb64url(request_["challenge"]), self.key_id, self.counter, approval_hash)
        body = {"keyId": b64url(self.key_id), "counter": self.counter, "approvalHash": b64url(approval_hash),
                "signature": b64url(self.key.sign(signed, ec.ECDSA(hashes.SHA256())))}
        if number is not None:
            body["number"] = number
        return request("POST", f"/v1/approvals/{request_['approvalId']}/approval", body, token=self.token)


def poll(auth_req_id):
    return request("POST", "/oauth/token", form={"grant_type": "urn:openid:params:grant-type:ciba", "auth_req_id": auth_req_id}, basic=True)


def bind_by_policy(phone):
    """A second phone: its password alone binds nothing; `phone` approves it with the number it shows. A third: a code."""
    second = Phone("py-alice", "correct horse battery", "py-phone-2")
    status, refused = second.register()
    check(status == 403 and refused["code"] == "device_binding_required", "a second phone's password alone binds nothing")
    status, asked = request("POST", "/v1/devices/binding-approvals",
                            {"keyId": b64url(second.key_id), "biometryKind": "faceID", "deviceName": "Python tablet"}, token=second.token)
    check(status == 201 and 10 <= asked["matchNumber"] <= 99, "the new phone asks the bound one, and shows a number")
    request_ = [r for r in phone.pending() if r["approvalId"] == asked["approvalId"]][0]
    check(request_["kind"] == "bind_device" and request_["bindingMessage"] == "Python tablet · Face ID"
          and asked["matchNumber"] in request_["numberChoices"], "the bound phone shows the new one and three numbers")
    status, approved = phone.approve(request_, asked["matchNumber"])
    check(status == 200 and approved["status"] == "approved", "the bound phone approves with the new phone's number")
    status, seen = request("GET", f"/v1/approvals/{asked['approvalId']}", token=second.token)
    check(status == 200 and seen["status"] == "approved", "the new phone reads that it was approved")
    status, device = second.register(approvalId=asked["approvalId"])
    check(status == 201 and device["boundBy"] == "approval" and "coolingOffUntil" not in device, "the approval binds the new phone's key")
    third = Phone("py-alice", "correct horse battery", "py-phone-3")
    status, device = third.register(bindingCode=binding_code("py-alice").lower())
    check(status == 201 and device["boundBy"] == "binding_code", "a binding code, typed in lower case, binds a third phone")
    status, reused = Phone("py-alice", "correct horse battery", "py-phone-4").register(bindingCode="0" * 25)
    check(status == 403 and reused["code"] == "binding_code_invalid", "a made-up code binds nothing")


def step_up(phone):
    """A sensitive operation asks for a fresh device key; so does the bank's own API, over introspection."""
    again = Phone("py-alice", "correct horse battery", "py-phone-1")
    again.key, again.public, again.key_id, again.counter = phone.key, phone.public, phone.key_id, phone.counter
    headers = {}
    status, refused = request("PUT", "/v1/me/payment-pin", {"pin": "258046", "currentPassword": "correct horse battery"},
                              token=again.token, headers_out=headers)
    challenge = headers.get("WWW-Authenticate", "")
    check(status == 401 and refused["code"] == "step_up_required" and refused["action"] == "set_payment_pin"
          and 'error="insufficient_user_authentication"' in challenge and 'acr_values="urn:bioauth:acr:device-key"' in challenge,
          "a password session sets no PIN on an account with a phone: step_up_required with RFC 9470's challenge")
    status, wrong = again.step_up("revoke_device")
    check(status == 200 and wrong["action"] == "revoke_device", "a step-up for another action is accepted")
    status, still = request("PUT", "/v1/me/payment-pin", {"pin": "258046", "currentPassword": "correct horse battery"}, token=again.token)
    check(status == 401 and still["code"] == "step_up_required", "but does not count for setting the PIN")
    status, raised = again.step_up("set_payment_pin")
    check(status == 200 and raised["acr"] == "urn:bioauth:acr:device-key" and "stepUpExpiresAt" in raised, "the phone steps up for the PIN")
    status, _ = request("PUT", "/v1/me/payment-pin", {"pin": "258046", "currentPassword": "correct horse battery"}, token=again.token)
    check(status == 204, "and then sets it")

    fresh = Phone("py-alice", "correct horse battery", "py-phone-1")
    fresh.key, fresh.public, fresh.key_id, fresh.counter = again.key, again.public, again.key_id, again.counter
    headers = {}
    status, refused = request("POST", "/transfers", {}, token=fresh.token, base=RESOURCE_SERVER, headers_out=headers)
    check(status == 401 and "insufficient_user_authentication" in headers.get("WWW-Authenticate", "") and refused["code"] == "step_up_required",
          "the bank's API, enforcing RFC 9470 over introspection, refuses a password session")
    status, _ = fresh.step_up()
    check(status == 200, "the phone steps up for every action")
    status, done = request("POST", "/transfers", {}, token=fresh.token, base=RESOURCE_SERVER)
    check(status == 200 and done["acr"] == "urn:bioauth:acr:device-key" and done["device_key_id"] == b64url(fresh.key_id),
          "and the bank's API accepts it: introspection says device-key, when, and which key")
    phone.token, phone.session_id, phone.counter = fresh.token, fresh.session_id, fresh.counter


def main():
    phone = Phone("py-alice", "correct horse battery", "py-phone-1", create=True)
    status, device = phone.register(bindingCode=binding_code("py-alice"))
    check(status == 201 and device["boundBy"] == "binding_code" and "coolingOffUntil" not in device,
          "the first phone binds with the bank's code, with no cooling-off")
    _, keys = request("GET", "/v1/receipt-keys")
    receipt_keys = [ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), unb64url(k["publicKey"])) for k in keys["keys"]]

    # An operation, approved.
    message = "Raise the daily transfer limit to ¥50,000"
    status, asked = request("POST", "/bc-authorize", form={"scope": "openid", "login_hint": "py-alice", "binding_message": message}, basic=True)
    check(status == 200 and len(unb64url(asked["auth_req_id"])) == 32 and asked["interval"] >= 1, "bc-authorize answers auth_req_id, expires_in, interval")
    status, pending = poll(asked["auth_req_id"])
    check(status == 400 and pending.get("error") == "authorization_pending", "the token endpoint says authorization_pending")
    status, too_soon = poll(asked["auth_req_id"])
    check(status == 400 and too_soon.get("error") == "slow_down", "polling sooner than the interval is slow_down")
    request_ = phone.pending()[0]
    check(request_["bindingMessage"] == message and request_["kind"] == "operation", "the phone shows the message verbatim")
    status, approved = phone.approve(request_)
    check(status == 200 and approved["status"] == "approved", "the phone approves with its key")
    time.sleep(asked["interval"] + 5.5)  # the interval grew by 5 with the slow_down
    status, token = poll(asked["auth_req_id"])
    check(status == 200 and "signedApproval" in token and "access_token" not in token, "the client collects the signed approval")
    signed = token["signedApproval"]
    verified = False
    for key in receipt_keys:
        try:
            key.verify(unb64url(signed["signature"]), approved_bytes(signed), ec.ECDSA(hashes.SHA256()))
            verified = True
        except InvalidSignature:
            pass
    check(verified and signed["bindingMessage"] == message, "the signed approval verifies offline with the receipt key")
    time.sleep(asked["interval"] + 10.5)
    status, again = poll(asked["auth_req_id"])
    check(status == 400 and again.get("error") == "invalid_grant", "the outcome is handed over once")

    # A sign-in with number matching: a wrong pick denies, the right one starts a session.
    status, asked = request("POST", "/bc-authorize", form={"scope": "openid", "login_hint": "py-alice"}, basic=True)
    number = asked["match_number"]
    request_ = phone.pending()[0]
    check(number in request_["numberChoices"] and len(request_["numberChoices"]) == 3, "the phone offers three numbers, the channel's among them")
    status, refused = phone.approve(request_, [n for n in request_["numberChoices"] if n != number][0])
    check(status == 403 and refused["code"] == "approval_number_mismatch", "a wrong pick is refused")
    status, denied = poll(asked["auth_req_id"])
    check(status == 400 and denied.get("error") == "access_denied", "and the client hears access_denied")

    status, asked = request("POST", "/bc-authorize", form={"scope": "openid", "login_hint": "py-alice"}, basic=True)
    request_ = phone.pending()[0]
    status, approved = phone.approve(request_, asked["match_number"])
    check(status == 200, "the right number approves")
    status, token = poll(asked["auth_req_id"])
    check(status == 200 and token["token_type"] == "Bearer" and "refresh_token" in token, "a sign-in hands over the customer's session")
    status, me = request("GET", "/v1/me", token=token["access_token"])
    check(status == 200 and me["signInMethod"] == "approval" and me["username"] == "py-alice", "the session is the customer's, approved on the phone")

    status, bad = request("POST", "/bc-authorize", form={"scope": "profile", "login_hint": "py-alice"}, basic=True)
    check(status == 400 and bad.get("error") == "invalid_scope", "a scope without openid is invalid_scope")
    status, nobody = request("POST", "/bc-authorize", form={"scope": "openid", "login_hint": "nobody-here"}, basic=True)
    check(status == 400 and nobody.get("error") == "unknown_user_id", "an unknown customer is unknown_user_id")
    step_up(phone)
    bind_by_policy(phone)
    print("outside client: all checks passed")


main()
