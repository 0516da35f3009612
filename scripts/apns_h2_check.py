#!/usr/bin/env python3
"""Sends Apple's documented Live Activity push payloads to Islet over real HTTP/2 (httpx + h2)
and checks the APNs-style replies. Run by Tests/IsletServerTests (LiveHTTP2Tests) against a
server with a self-signed certificate; exits 0 when every check passed, printing one line per
check, and 1 otherwise.

    apns_h2_check.py --port P --activity-token HEX --start-token HEX --topic BUNDLE.push-type.liveactivity
"""
import argparse
import json
import sys

import httpx

UPDATE = {"aps": {"timestamp": 1685952000, "event": "update",
                  "content-state": {"currentHealthLevel": 0.941, "eventDescription": "Power Panda found a sword!"}}}
UPDATE_ALERT = {"aps": {"timestamp": 1685952000, "event": "update",
                        "content-state": {"currentHealthLevel": 0.0,
                                          "eventDescription": "Power Panda has been knocked down!"},
                        "alert": {"title": {"loc-key": "%@ is knocked down!", "loc-args": ["Power Panda"]},
                                  "body": {"loc-key": "Use a potion to heal %@!", "loc-args": ["Power Panda"]},
                                  "sound": "HeroDown.mp4"}}}
UPDATE_RELEVANCE = {"aps": {"timestamp": 1685952000, "event": "update", "relevance-score": 100,
                            "content-state": {"currentHealthLevel": 0.941,
                                              "eventDescription": "Power Panda found a sword!"}}}
UPDATE_STALE = {"aps": {"timestamp": 1685952000, "event": "update", "stale-date": 1685952900,
                        "content-state": {"currentHealthLevel": 0.5, "eventDescription": "Resting"}}}
START = {"aps": {"timestamp": 1234, "event": "start",
                 "content-state": {"currentHealthLevel": 100, "eventDescription": "Adventure has begun!"},
                 "attributes-type": "AdventureAttributes",
                 "attributes": {"hero": {"name": "Power Panda", "avatar": "U+1F43C", "healthLevel": 100,
                                         "heroType": "Forest Dweller", "healthRecoveryRatePerHour": 0.25,
                                         "url": "game:///panda", "battleCode": "game:///panda/battle", "level": 3,
                                         "exp": 600, "bio": "Power Panda loves eating bamboo shoots and leaves."}},
                 "alert": {"title": {"loc-key": "%@ is on an adventure!", "loc-args": ["Power Panda"]},
                           "body": {"loc-key": "%@ found a sword!", "loc-args": ["Power Panda"]},
                           "sound": "chime.aiff"}}}
START_TOKEN = {"aps": {"timestamp": 1750000000, "event": "start", "input-push-token": 1,
                       "content-state": {"currentHealthLevel": 100, "eventDescription": "Adventure has begun!"},
                       "attributes-type": "AdventureAttributes", "attributes": {"hero": {"name": "Power Panda"}},
                       "alert": {"title": "Adventure started", "body": "Power Panda is on an adventure!",
                                 "sound": "default"}}}
START_CHANNEL = {"aps": {"timestamp": 1750000000, "event": "start", "input-push-channel": "dHN0LXNyY2gtY2hubA==",
                         "content-state": {"currentHealthLevel": 100, "eventDescription": "Adventure has begun!"},
                         "attributes-type": "AdventureAttributes", "attributes": {"hero": {"name": "Power Panda"}},
                         "alert": {"title": "Adventure started", "body": "Power Panda is on an adventure!"}}}
END_CUSTOM = {"aps": {"timestamp": 1685959200, "event": "end",
                      "content-state": {"currentHealthLevel": 1.0,
                                        "eventDescription": "Adventure over! Power Panda is taking a nap."},
                      "dismissal-date": 1685961000}}
END_NOW = {"aps": {"timestamp": 1685959200, "event": "end", "dismissal-date": 1663177260,
                   "content-state": {"currentHealthLevel": 1.0, "eventDescription": "Done"}}}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--activity-token", required=True)
    parser.add_argument("--start-token", required=True)
    parser.add_argument("--topic", required=True)
    args = parser.parse_args()
    failures = 0

    def check(name, condition, detail=""):
        nonlocal failures
        print(("ok   " if condition else "FAIL ") + name + (f": {detail}" if detail and not condition else ""))
        if not condition:
            failures += 1

    headers = {"apns-push-type": "liveactivity", "apns-topic": args.topic, "apns-priority": "10",
               "authorization": "bearer provider.jwt.placeholder"}
    with httpx.Client(http2=True, verify=False, base_url=f"https://127.0.0.1:{args.port}", timeout=10) as client:
        def push(token, payload, extra=None, raw=None):
            return client.post(f"/3/device/{token}", headers={**headers, **(extra or {})},
                               content=raw if raw is not None else json.dumps(payload).encode())

        for name, payload in [("update", UPDATE), ("update with alert", UPDATE_ALERT),
                              ("update with relevance score", UPDATE_RELEVANCE), ("update with stale date", UPDATE_STALE)]:
            reply = push(args.activity_token, payload)
            check(f"{name}: HTTP/2", reply.http_version == "HTTP/2", reply.http_version)
            check(f"{name}: 200 with apns-id", reply.status_code == 200 and "apns-id" in reply.headers,
                  f"{reply.status_code} {reply.text}")
        own_id = "eabeae54-14a8-11e5-b60b-1697f925ec7b"
        reply = push(args.activity_token, UPDATE, {"apns-id": own_id.upper(), "apns-priority": "5",
                                                   "apns-collapse-id": "c1", "apns-expiration": "0"})
        check("apns-id echoed", reply.headers.get("apns-id") == own_id, str(reply.headers))
        for name, payload in [("start (Apple's example)", START), ("start with input-push-token", START_TOKEN),
                              ("start with input-push-channel", START_CHANNEL)]:
            reply = push(args.start_token, payload)
            check(f"{name}: 200", reply.status_code == 200, f"{reply.status_code} {reply.text}")
        for name, extra, raw, status, reason in [
            ("wrong push type", {"apns-push-type": "alert"}, None, 400, "InvalidPushType"),
            ("topic of another app", {"apns-topic": "other.push-type.liveactivity"}, None, 400, "DeviceTokenNotForTopic"),
            ("bad priority", {"apns-priority": "1"}, None, 400, "BadPriority"),
            ("long collapse id", {"apns-collapse-id": "x" * 65}, None, 400, "BadCollapseId"),
            ("empty payload", None, b"", 400, "PayloadEmpty"),
            ("payload over 4 KiB", None, b'{"aps":{"pad":"' + b"x" * 4100 + b'"}}', 413, "PayloadTooLarge"),
        ]:
            reply = push(args.activity_token, UPDATE, extra, raw)
            body = reply.json() if reply.headers.get("content-type", "").startswith("application/json") else {}
            check(f"{name}: {status} {reason}", reply.status_code == status and body.get("reason") == reason,
                  f"{reply.status_code} {reply.text}")
        reply = push("ab" * 32, UPDATE)
        check("unknown token: 400 BadDeviceToken", reply.status_code == 400 and reply.json().get("reason") == "BadDeviceToken")
        activities = client.get("/v1/state", params={"path": "/activities"}).json()["value"]
        started = [a for a in activities.values() if a.get("source") == "push" and a.get("pushToken")]
        check("a push-started activity with a push token", len(started) == 1, json.dumps(activities)[:300])
        if started:
            reply = push(started[0]["pushToken"], END_CUSTOM)
            check("end with custom dismissal: 200", reply.status_code == 200, f"{reply.status_code} {reply.text}")
        reply = push(args.activity_token, END_NOW)
        check("end, dismiss at once: 200", reply.status_code == 200, f"{reply.status_code} {reply.text}")
        reply = push(args.activity_token, UPDATE)
        check("after dismissal: 410 Unregistered", reply.status_code == 410 and reply.json().get("reason") == "Unregistered",
              f"{reply.status_code} {reply.text}")
        state = client.get("/v1/state", params={"path": "/apps/coffee/deliveries"})
        check("the REST API over HTTP/2", state.status_code == 200 and state.http_version == "HTTP/2", state.text[:200])
        deliveries = state.json()["value"] if state.status_code == 200 else []
        check("deliveries recorded with source push", sum(1 for d in deliveries if d.get("source") == "push") >= 8,
              json.dumps(deliveries)[:400])
    print(f"{failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
