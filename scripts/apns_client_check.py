#!/usr/bin/env python3
"""Drives Islet's HTTP/2 listener as a real provider would: aioapns (an unmodified APNs client
from PyPI, token-based auth) for Live Activity pushes, and raw HTTP/2 requests (httpx + h2) with
ES256 provider tokens made by PyJWT for what aioapns does not speak (channel management,
broadcasts, widget pushes) and for each provider-token refusal. Run by
Tests/IsletServerTests (LiveHTTP2Tests) against a server with a certificate of its own and an
admin token; exits 0 when every check passed, printing one line per check.

    apns_client_check.py --port P --ca cert.pem --admin-token T --activity-token HEX \
        --start-token HEX --widget-token HEX
"""
import argparse
import asyncio
import json
import ssl
import sys
import time

import httpx
import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

import aioapns
from aioapns import connection as apns_connection

TEAM = "TEAM123456"
CLIENT_KEY_ID = "AIOAPNS001"
RAW_KEY_ID = "RAWH2KEY02"


def new_key():
    key = ec.generate_private_key(ec.SECP256R1())
    p8 = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                           serialization.NoEncryption()).decode()
    public = key.public_key().public_bytes(serialization.Encoding.PEM,
                                           serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    return p8, public


def provider_token(p8, key_id, iat):
    return jwt.encode({"iss": TEAM, "iat": iat}, p8, algorithm="ES256", headers={"kid": key_id})


def main():
    parser = argparse.ArgumentParser()
    for name in ["--ca", "--admin-token", "--activity-token", "--start-token", "--widget-token"]:
        parser.add_argument(name, required=True)
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    failures = 0

    def check(name, condition, detail=""):
        nonlocal failures
        print(("ok   " if condition else "FAIL ") + name + (f": {detail}" if detail and not condition else ""))
        if not condition:
            failures += 1

    client_p8, client_public = new_key()
    raw_p8, raw_public = new_key()
    stranger_p8, _ = new_key()
    admin = {"authorization": f"Bearer {args.admin_token}"}
    context = ssl.create_default_context(cafile=args.ca)
    with httpx.Client(http2=True, verify=context, base_url=f"https://127.0.0.1:{args.port}", timeout=10) as client:
        def state(path):
            reply = client.get("/v1/state", params={"path": path}, headers=admin)
            return reply.json().get("value") if reply.status_code == 200 else None

        def rev():
            return client.get("/v1/state", params={"path": "/clock"}, headers=admin).json()["rev"]

        for key_id, public in [(CLIENT_KEY_ID, client_public), (RAW_KEY_ID, raw_public)]:
            reply = client.put(f"/v1/apns/keys/{key_id}", headers={**admin, "content-type": "application/json"},
                               content=json.dumps({"teamId": TEAM, "publicKey": public}))
            check(f"key {key_id} registered", reply.status_code == 200, f"{reply.status_code} {reply.text}")

        token = provider_token(raw_p8, RAW_KEY_ID, int(time.time()))
        bearer = {"authorization": f"bearer {token}"}

        reply = client.post("/1/apps/coffee/channels", headers=bearer,
                            content=json.dumps({"message-storage-policy": 1, "push-type": "LiveActivity"}))
        channel = reply.headers.get("apns-channel-id", "")
        check("channel created over HTTP/2 with a provider token: 201", reply.status_code == 201 and
              reply.http_version == "HTTP/2" and channel, f"{reply.status_code} {reply.text}")

        # aioapns, unmodified, pointed at Islet: its endpoint is a class constant.
        apns_connection.APNsDevelopmentClientProtocol.APNS_SERVER = "127.0.0.1"
        apns_connection.APNsDevelopmentClientProtocol.APNS_PORT = args.port

        async def with_aioapns():
            apns = aioapns.APNs(key=client_p8, key_id=CLIENT_KEY_ID, team_id=TEAM,
                                topic="coffee.push-type.liveactivity", use_sandbox=True, ssl_context=context)
            now = int(time.time())
            start = {"aps": {"timestamp": now, "event": "start", "input-push-channel": channel,
                             "attributes-type": "CoffeeDeliveryAttributes", "attributes": {"orderNumber": "P-7"},
                             "content-state": {"status": "received", "eta": 9},
                             "alert": {"title": "Order placed", "body": "We are on it"}}}
            update = {"aps": {"timestamp": now, "event": "update",
                              "content-state": {"status": "brewing", "eta": 4}}}
            results = []
            for token, message in [(args.start_token, start), (args.activity_token, update), ("ab" * 32, update)]:
                results.append(await apns.send_notification(aioapns.NotificationRequest(
                    device_token=token, message=message, push_type=aioapns.PushType.LIVEACTIVITY, priority=10)))
            return results

        started, updated, unknown = asyncio.run(with_aioapns())
        check("aioapns push-to-start with input-push-channel: 200", started.is_successful,
              f"{started.status} {started.description}")
        check("aioapns update: 200", updated.is_successful, f"{updated.status} {updated.description}")
        check("aioapns unknown token: 400 BadDeviceToken",
              unknown.status == "400" and unknown.description == "BadDeviceToken",
              f"{unknown.status} {unknown.description}")
        check("the update applied", state("/activities/a1/content/state/status") == "brewing",
              json.dumps(state("/activities/a1")))
        check("the pushed start subscribed to the channel", state(f"/apps/coffee/channels/{channel}/subscribers") == 1,
              json.dumps(state("/apps/coffee/channels")))

        broadcast = {"aps": {"timestamp": int(time.time()), "event": "update",
                             "content-state": {"status": "out for delivery", "eta": 2}}}
        reply = client.post("/4/broadcasts/apps/coffee", content=json.dumps(broadcast),
                            headers={**bearer, "apns-push-type": "liveactivity", "apns-channel-id": channel,
                                     "apns-priority": "5"})
        check("broadcast over HTTP/2: 200 with apns-id", reply.status_code == 200 and "apns-id" in reply.headers,
              f"{reply.status_code} {reply.text}")
        subscribed = [a for a in (state("/activities") or {}).values() if a.get("pushChannel") == channel]
        check("the broadcast reached the subscriber",
              len(subscribed) == 1 and subscribed[0]["content"]["state"]["status"] == "out for delivery",
              json.dumps(subscribed)[:300])

        reply = client.post(f"/3/device/{args.widget_token}", content=json.dumps({"aps": {"content-changed": True}}),
                            headers={**bearer, "apns-push-type": "widgets", "apns-topic": "coffee.push-type.widgets"})
        check("widget push over HTTP/2: 200", reply.status_code == 200, f"{reply.status_code} {reply.text}")
        check("the widget reloads for the push", state("/widgets/w1/reload/lastReason") == "push",
              json.dumps(state("/widgets/w1/reload")))

        before = rev()
        now = int(time.time())
        update = json.dumps({"aps": {"timestamp": now, "event": "update", "content-state": {"status": "x"}}})
        push_headers = {"apns-push-type": "liveactivity", "apns-topic": "coffee.push-type.liveactivity"}
        for name, authorization, status, reason in [
            ("no provider token", None, 403, "MissingProviderToken"),
            ("Islet's admin token instead of a JWT", f"bearer {args.admin_token}", 403, "InvalidProviderToken"),
            ("a token signed by an unregistered key", f"bearer {provider_token(stranger_p8, RAW_KEY_ID, now)}", 403,
             "InvalidProviderToken"),
            ("a token older than an hour", f"bearer {provider_token(raw_p8, RAW_KEY_ID, now - 7200)}", 403,
             "ExpiredProviderToken"),
            ("a second new token within 20 minutes", f"bearer {provider_token(raw_p8, RAW_KEY_ID, now - 60)}", 429,
             "TooManyProviderTokenUpdates"),
        ]:
            headers = dict(push_headers)
            if authorization:
                headers["authorization"] = authorization
            reply = client.post(f"/3/device/{args.activity_token}", content=update, headers=headers)
            body = reply.json() if reply.headers.get("content-type", "").startswith("application/json") else {}
            check(f"{name}: {status} {reason}", reply.status_code == status and body.get("reason") == reason,
                  f"{reply.status_code} {reply.text}")
        check("refused pushes changed nothing", rev() == before, f"{before} → {rev()}")
        reply = client.post(f"/3/device/{args.activity_token}", content=update, headers={**push_headers, **bearer})
        check("the accepted token still works", reply.status_code == 200, f"{reply.status_code} {reply.text}")
    print(f"{failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
