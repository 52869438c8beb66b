#!/usr/bin/env python3
"""A bank's resource server that enforces RFC 9470 step-up over BioAuth's introspection, written from docs/PROTOCOL.md
("Step-up", "For the bank's APIs") alone with Python's standard library. `POST /transfers` needs a device key
(`urn:bioauth:acr:device-key` or stronger) proven within MAX_AGE seconds; short of that it answers 401 with
`WWW-Authenticate: Bearer error="insufficient_user_authentication", acr_values=..., max_age=...` and BioAuth's problem
document, which the SDK's `withStepUp` (or any client) answers with a step-up and a retry.

Usage: resource_server.py BIOAUTH_URL CLIENT_ID CLIENT_SECRET PORT   (the client holds sessions:introspect)
"""
import base64
import json
import sys
import time
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, HTTPServer

BIOAUTH, CLIENT_ID, CLIENT_SECRET, PORT = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
LEVELS = ["urn:bioauth:acr:password", "urn:bioauth:acr:synced-passkey", "urn:bioauth:acr:device-key", "urn:bioauth:acr:attested-device-key"]
NEEDED, MAX_AGE = "urn:bioauth:acr:device-key", 60


def post_form(path, form, authorization):
    request = urllib.request.Request(BIOAUTH + path, data=urllib.parse.urlencode(form).encode(), method="POST",
                                     headers={"Content-Type": "application/x-www-form-urlencoded", "Authorization": authorization})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def introspect(token):
    basic = base64.b64encode(f"{urllib.parse.quote(CLIENT_ID, safe='')}:{urllib.parse.quote(CLIENT_SECRET, safe='')}".encode()).decode()
    service = post_form("/oauth/token", {"grant_type": "client_credentials", "scope": "sessions:introspect"}, "Basic " + basic)
    return post_form("/oauth/introspect", {"token": token}, "Bearer " + service["access_token"])


class Handler(BaseHTTPRequestHandler):
    def answer(self, status, body, challenge=None):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/problem+json" if status >= 400 else "application/json")
        if challenge:
            self.send_header("WWW-Authenticate", challenge)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        if self.path != "/transfers":
            return self.answer(404, {"code": "not_found"})
        authorization = self.headers.get("Authorization", "")
        seen = introspect(authorization[7:]) if authorization.startswith("Bearer ") else {"active": False}
        if not seen.get("active"):
            return self.answer(401, {"code": "unauthenticated"}, 'Bearer error="invalid_token"')
        acr, auth_time = seen.get("acr", LEVELS[0]), seen.get("auth_time", 0)
        if LEVELS.index(acr) < LEVELS.index(NEEDED) or time.time() - auth_time > MAX_AGE:
            challenge = (f'Bearer error="insufficient_user_authentication", error_description="A fresh confirmation is required", '
                         f'acr_values="{NEEDED}", max_age={MAX_AGE}')
            return self.answer(401, {"code": "step_up_required", "status": 401, "acr_values": NEEDED, "max_age": MAX_AGE, "action": ""}, challenge)
        self.answer(200, {"transfer": "accepted", "acr": acr, "auth_time": auth_time, "device_key_id": seen.get("device_key_id")})

    def log_message(self, *args):
        pass


HTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
