#!/usr/bin/env python3
"""Writes the step-up test vectors (docs/PROTOCOL.md, "Step-up") with an implementation independent of the Swift one:
canonical step-ups and their hashes, and a `stepup` signed payload signed by a test device key.

Run from the repository root: python3 scripts/step-up-vectors.py
Needs the `cryptography` package. ECDSA signatures are randomized, so a new run gives a new (equally valid) signature;
the bytes never change.
"""
import hashlib
import json
import struct

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

OUT = "Tests/BioAuthCoreTests/Fixtures/step-up-v1.json"


def sha256(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def field(value: bytes) -> bytes:
    return struct.pack(">H", len(value)) + value


def step_up(session_id: str, action: str) -> bytes:
    return b"BIOAUTH\x00" + bytes([1]) + field(b"stepup") + field(session_id.encode("utf-8")) + field(action.encode("ascii"))


def payload(purpose, rp_id, challenge, key_id, counter, hash_):
    return (b"BIOAUTH\x00" + bytes([1]) + field(purpose.encode("ascii")) + field(rp_id.encode("utf-8"))
            + field(challenge) + field(key_id) + struct.pack(">Q", counter) + field(hash_))


def key(label: str):
    return ec.derive_private_key(int.from_bytes(sha256(label.encode()), "big"), ec.SECP256R1())


def x963(private_key) -> bytes:
    return private_key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)


cases = [
    ("changing the password", "3f2e1d0c-9b8a-4766-8554-433221100fed", "change_password"),
    ("setting the payment PIN", "3f2e1d0c-9b8a-4766-8554-433221100fed", "set_payment_pin"),
    ("any action of the table", "a1b2c3d4-e5f6-4789-8abc-def012345678", ""),
]

step_ups = []
for name, session_id, action in cases:
    data = step_up(session_id, action)
    step_ups.append({"name": name, "sessionId": session_id, "action": action, "bytesHex": data.hex(), "sha256Hex": sha256(data).hex()})

device_key = key("bioauth test key 1")
device_key_id = sha256(x963(device_key))
step_up_hash = sha256(step_up(cases[1][1], cases[1][2]))
challenge = sha256(b"step-up challenge 1")
signed_payload = payload("stepup", "bank.example", challenge, device_key_id, 12, step_up_hash)
device_signature = device_key.sign(signed_payload, ec.ECDSA(hashes.SHA256()))

with open(OUT, "w", encoding="utf-8") as out:
    json.dump({
        "format": "BioAuth canonical step-up and stepup signed payload, version 1",
        "note": "Test keys only: their private scalars are published here.",
        "stepUps": step_ups,
        "signedPayload": {
            "relyingPartyId": "bank.example", "challengeHex": challenge.hex(), "keyIdHex": device_key_id.hex(), "counter": 12,
            "stepUpHashHex": step_up_hash.hex(), "bytesHex": signed_payload.hex(), "publicKeyX963Hex": x963(device_key).hex(),
            "signatureDerHex": device_signature.hex(),
        },
    }, out, ensure_ascii=False, indent=2)
    out.write("\n")
print(f"wrote {len(step_ups)} step-ups and a signed payload to {OUT}")
