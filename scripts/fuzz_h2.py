#!/usr/bin/env python3
"""Seeded HTTP/2 frame fuzzing of Islet's TLS listener: after a valid connection preface, each
connection sends a run of generated frames (well-formed requests to real routes, malformed
header blocks, frames on wrong streams, bad lengths and flags, unknown types, window and
settings abuse, raw garbage), reads whatever comes back for a moment, and closes. After every
batch of connections the plain HTTP/1.1 port's /healthz must answer 200. Prints the counts;
exits 0 when the server stayed up throughout. Every wait is bounded: a server that stops
taking TLS connections (50 in a row refused before their first frame) or a run longer than
--deadline seconds ends the run with status 1 and what it saw.

    fuzz_h2.py --tls-port P --http-port Q --frames N --seed S [--deadline SECONDS]
"""
import argparse
import random
import socket
import ssl
import sys
import time
import urllib.request

import hpack
from hyperframe import frame as frames

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
ROUTES = [("GET", "/v1/state"), ("GET", "/healthz"), ("POST", "/v1/commands"), ("POST", "/3/device/" + "ab" * 32),
          ("POST", "/4/broadcasts/apps/coffee"), ("POST", "/1/apps/coffee/channels"), ("GET", "/v1/simulations"),
          ("DELETE", "/v1/simulations/x"), ("GET", "/../../etc/passwd"), ("PUT", "/v1/clock")]


def header_block(rng, encoder):
    method, path = rng.choice(ROUTES)
    headers = [(":method", method), (":scheme", "https"), (":path", path), (":authority", "127.0.0.1")]
    roll = rng.random()
    if roll < 0.2:
        headers.append(("content-type", "application/json"))
    elif roll < 0.3:
        headers += [("x-pad-%d" % i, "v" * rng.randint(1, 4000)) for i in range(rng.randint(1, 40))]
    elif roll < 0.4:
        headers = headers[rng.randint(0, 3):]  # missing pseudo-headers
    elif roll < 0.5:
        headers.append((":path", "/again"))
    elif roll < 0.55:
        headers.append(("Upper-Case", "x"))
    elif roll < 0.6:
        headers.append(("apns-push-type", "liveactivity"))
        headers.append(("apns-channel-id", rng.choice(["", "%%%", "dHN0LXNyY2gtY2hubA=="])))
    block = encoder.encode(headers)
    if rng.random() < 0.15:
        block = bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 64)))  # not HPACK at all
    return block


def body(rng):
    choices = [b'{"commands":[{"type":"clock.advance","seconds":1}]}', b"{", b'{"aps":{"event":"update"}}',
               b'{"message-storage-policy":1,"push-type":"LiveActivity"}', b"\xff\xfe", b"[" * 500,
               b"x" * rng.randint(0, 20000)]
    return rng.choice(choices)


def on_stream(serialized, stream_id):
    """The frame with its stream id replaced (hyperframe refuses the invalid ones we want)."""
    return serialized[:5] + stream_id.to_bytes(4, "big") + serialized[9:]


def one_frame(rng, stream, encoder):
    kind = rng.randrange(14)
    if kind <= 3:
        f = frames.HeadersFrame(stream)
        f.data = header_block(rng, encoder)
        f.flags.add("END_HEADERS")
        if rng.random() < 0.4:
            f.flags.add("END_STREAM")
        return f.serialize()
    if kind <= 5:
        f = frames.DataFrame(1)
        f.data = body(rng)
        if rng.random() < 0.7:
            f.flags.add("END_STREAM")
        return on_stream(f.serialize(), rng.choice([stream, stream + 2, 0, 1]))
    if kind == 6:
        f = frames.WindowUpdateFrame(0)
        f.window_increment = rng.choice([1, 65535, 2 ** 31 - 1])
        return on_stream(f.serialize(), rng.choice([0, stream]))
    if kind == 7:
        f = frames.SettingsFrame(0)
        f.settings = {rng.choice([1, 2, 3, 4, 5, 6, 0x99]): rng.choice([0, 1, 16384, 2 ** 24, 2 ** 31 - 1])}
        return f.serialize()
    if kind == 8:
        f = frames.RstStreamFrame(1)
        f.error_code = rng.randrange(16)
        return on_stream(f.serialize(), rng.choice([stream, 0, 999]))
    if kind == 9:
        f = frames.PingFrame(0)
        f.opaque_data = b"12345678"
        return f.serialize()
    if kind == 10:
        f = frames.PriorityFrame(1)
        f.depends_on = rng.choice([0, 3])
        return on_stream(f.serialize(), rng.choice([stream, 0]))
    if kind == 11:
        f = frames.ContinuationFrame(1)
        f.data = header_block(rng, encoder)
        return on_stream(f.serialize(), rng.choice([stream, stream + 2]))
    if kind == 12:
        # A frame header with a wrong length, an unknown type or a reserved stream bit.
        length = rng.choice([0, 7, 16385, 2 ** 24 - 1])
        return length.to_bytes(3, "big") + bytes([rng.choice([0x4, 0x6, 0x8, 0xA, 0xFF]), rng.getrandbits(8)]) + \
            (rng.choice([0, stream, 2 ** 31 + 1])).to_bytes(4, "big") + bytes(rng.getrandbits(8) for _ in range(min(length, 64)))
    return bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 128)))


def healthy(http_port):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{http_port}/healthz", timeout=10) as reply:
            return reply.status == 200
    except Exception as error:  # noqa: BLE001 (any failure is unhealthy)
        print(f"healthz failed: {error}", file=sys.stderr)
        return False


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tls-port", type=int, required=True)
    parser.add_argument("--http-port", type=int, required=True)
    parser.add_argument("--frames", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--deadline", type=float, default=300)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    context.set_alpn_protocols(["h2"])
    sent = connections = refused_connections = replies = refused_in_a_row = 0
    started = time.monotonic()

    def counts():
        return (f"{sent} frames over {connections} connections ({refused_connections} cut short by the server), "
                f"{replies} reads with data, {time.monotonic() - started:.1f} s")

    while sent < args.frames:
        batch_end = min(args.frames, sent + 1000)
        while sent < batch_end:
            if time.monotonic() - started > args.deadline:
                print(f"h2 fuzzing did not finish within {args.deadline:.0f} s: {counts()}; /healthz "
                      f"{'200' if healthy(args.http_port) else 'not answering'}")
                return 1
            if refused_in_a_row >= 50:
                print(f"the TLS listener refused {refused_in_a_row} connections in a row before their first frame: "
                      f"{counts()}; /healthz {'200' if healthy(args.http_port) else 'not answering'}")
                return 1
            connections += 1
            sent_before = sent
            try:
                raw = socket.create_connection(("127.0.0.1", args.tls_port), timeout=5)
                with context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
                    encoder = hpack.Encoder()
                    tls.sendall(PREFACE + frames.SettingsFrame(0).serialize())
                    stream = 1
                    for _ in range(rng.randint(1, 40)):
                        tls.sendall(one_frame(rng, stream, encoder))
                        sent += 1
                        if rng.random() < 0.3:
                            stream += 2
                    # What comes back for a moment: at most 64 reads, each within 50 ms of the last.
                    tls.settimeout(0.05)
                    try:
                        for _ in range(64):
                            if not tls.recv(65536):
                                break
                            replies += 1
                    except (socket.timeout, ssl.SSLError, ConnectionError):
                        pass
            except (ConnectionError, ssl.SSLError, socket.timeout, OSError):
                refused_connections += 1
            refused_in_a_row = refused_in_a_row + 1 if sent == sent_before else 0
        if not healthy(args.http_port):
            print(f"the server stopped answering after {sent} frames")
            return 1
    print(f"h2 frames: {counts()}; /healthz 200 after every 1000")
    return 0

if __name__ == "__main__":
    sys.exit(main())
