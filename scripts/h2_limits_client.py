#!/usr/bin/env python3
"""Misbehaving HTTP/2 clients, for the tests of the HTTP/2 listener
(Tests/IsletTransportTests/HTTP2ListenerTests.swift). Each command connects to 127.0.0.1:PORT
over TLS (ALPN h2, certificate not checked), does one thing and prints one JSON line with what
the server did; the Swift test checks it. Every wait is bounded by --timeout.

    h2_limits_client.py hpack-bomb --port P         header list decoding to ~48 MB, then a normal GET
    h2_limits_client.py many-headers --port P       200 small header fields, then a normal GET
    h2_limits_client.py streams --port P --count N [--ack]
                                                    N streams left open; --ack acknowledges the
                                                    server's SETTINGS first
    h2_limits_client.py trailers --port P            POST with a body, then trailers ending it
    h2_limits_client.py big-body --port P --limit L  POST with Content-Length over L, then one
                                                    without Content-Length whose DATA goes over L
    h2_limits_client.py idle --port P [--half-request]
                                                    one GET (or HEADERS without END_STREAM), then
                                                    silence until the server's GOAWAY and close
    h2_limits_client.py no-read --port P --count N --path /big?bytes=B [--ping-every S]
                                                    opens the flow-control windows, asks for N
                                                    replies, never reads; prints "sent", holds the
                                                    connection (sending a PING every S seconds)
                                                    until standard input closes
    h2_limits_client.py get --port P --count N --path P
                                                    N GETs in one write, each reply read whole
"""
import argparse
import json
import os
import socket
import ssl
import sys
import threading
import time

import h2.config
import h2.connection
import h2.events
import h2.settings
import hpack
from hyperframe.frame import DataFrame, Frame, GoAwayFrame, HeadersFrame, RstStreamFrame, SettingsFrame

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


def connect(port, timeout, receive_buffer=None):
    raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if receive_buffer:
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    raw.settimeout(timeout)
    raw.connect(("127.0.0.1", port))
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    context.set_alpn_protocols(["h2"])
    tls = context.wrap_socket(raw, server_hostname="127.0.0.1")
    if tls.selected_alpn_protocol() != "h2":
        raise SystemExit("the server did not select h2")
    return tls


def request_headers(path, method="GET", extra=()):
    return [(":method", method), (":path", path), (":scheme", "https"), (":authority", "127.0.0.1")] + list(extra)


class Client:
    """An h2 client connection that reads until a condition holds (or the timeout)."""

    def __init__(self, port, timeout):
        self.sock = connect(port, timeout)
        self.conn = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=True))
        self.conn.initiate_connection()
        self.flush()
        self.replies = {}
        self.resets = {}
        self.goaway = None
        self.closed = False

    def flush(self):
        data = self.conn.data_to_send()
        if data:
            self.sock.sendall(data)

    def request(self, path, method="GET", extra=(), body=None, end=True):
        stream = self.conn.get_next_available_stream_id()
        self.conn.send_headers(stream, request_headers(path, method, extra), end_stream=end and body is None)
        if body is not None:
            self.conn.send_data(stream, body, end_stream=end)
        self.flush()
        return stream

    def read_until(self, done):
        while not done() and not self.closed:
            self.read_once()

    def read_once(self):
        try:
            data = self.sock.recv(65536)
        except (ConnectionResetError, ssl.SSLError):
            data = b""
        if not data:
            self.closed = True
            return
        for event in self.conn.receive_data(data):
            self.handle(event)
        self.flush()

    def handle(self, event):
        if isinstance(event, h2.events.ResponseReceived):
            status = dict(event.headers)[b":status"]
            self.replies.setdefault(event.stream_id, {"status": int(status), "body": 0, "ended": False})
        elif isinstance(event, h2.events.DataReceived):
            self.replies[event.stream_id]["body"] += len(event.data)
            self.conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
        elif isinstance(event, h2.events.StreamEnded):
            self.replies[event.stream_id]["ended"] = True
        elif isinstance(event, h2.events.StreamReset):
            self.resets[event.stream_id] = int(event.error_code)
        elif isinstance(event, h2.events.ConnectionTerminated):
            self.goaway = {"error": int(event.error_code), "last": event.last_stream_id}

    def ended(self, stream):
        return lambda: self.replies.get(stream, {}).get("ended") or stream in self.resets


def hpack_bomb(args):
    client = Client(args.port, args.timeout)
    # The first field enters the server's 4 KiB HPACK table; each repeat is a one-byte reference.
    bomb = client.request("/bomb", extra=[("x-bomb", "a" * 4000)] * 12000)
    client.read_until(client.ended(bomb))
    after = client.request("/after")
    client.read_until(client.ended(after))
    print(json.dumps({"bomb": client.replies.get(bomb), "bombReset": client.resets.get(bomb),
                      "after": client.replies.get(after)}))


def many_headers(args):
    client = Client(args.port, args.timeout)
    crowd = client.request("/crowd", extra=[("x-field-%d" % i, "v") for i in range(200)])
    client.read_until(client.ended(crowd))
    after = client.request("/after")
    client.read_until(client.ended(after))
    print(json.dumps({"crowd": client.replies.get(crowd), "after": client.replies.get(after)}))


class RawConnection:
    """Frames by hand, for what h2 refuses to send (more streams than the server allows)."""

    def __init__(self, port, timeout):
        self.sock = connect(port, timeout)
        self.buffer = b""
        self.encoder = hpack.Encoder()

    def send(self, *frames):
        self.sock.sendall(b"".join(frame.serialize() for frame in frames))

    def read_exactly(self, count):
        while len(self.buffer) < count:
            try:
                data = self.sock.recv(65536)
            except (ConnectionResetError, ssl.SSLError):
                data = b""
            if not data:
                return None
            self.buffer += data
        chunk, self.buffer = self.buffer[:count], self.buffer[count:]
        return chunk

    def next_frame(self):
        header = self.read_exactly(9)
        if header is None:
            return None
        frame, length = Frame.parse_frame_header(memoryview(header))
        frame.parse_body(memoryview(self.read_exactly(length) or b""))
        return frame

    def headers(self, stream, path, end_stream):
        flags = ["END_HEADERS"] + (["END_STREAM"] if end_stream else [])
        return HeadersFrame(stream, data=self.encoder.encode(request_headers(path)), flags=flags)


def streams(args):
    raw = RawConnection(args.port, args.timeout)
    raw.sock.sendall(PREFACE)
    raw.send(SettingsFrame(0))
    while True:
        frame = raw.next_frame()
        if frame is None:
            raise SystemExit("closed before the server's SETTINGS")
        if isinstance(frame, SettingsFrame) and "ACK" not in frame.flags:
            break
    if args.ack:
        raw.send(SettingsFrame(0, flags=["ACK"]))
    ids = [1 + 2 * i for i in range(args.count)]
    raw.send(*[raw.headers(stream, "/hold", end_stream=False) for stream in ids])
    resets, goaway, closed = {}, None, False
    while goaway is None and ids[-1] not in resets:
        frame = raw.next_frame()
        if frame is None:
            closed = True
            break
        if isinstance(frame, RstStreamFrame):
            resets[frame.stream_id] = frame.error_code
        elif isinstance(frame, GoAwayFrame):
            goaway = {"error": frame.error_code, "last": frame.last_stream_id}
    answered = None
    if goaway is None and not closed:
        # The connection goes on: the first stream gets its reply once its request ends.
        raw.send(DataFrame(ids[0], data=b"", flags=["END_STREAM"]))
        while answered is None:
            frame = raw.next_frame()
            if frame is None:
                closed = True
                break
            if isinstance(frame, HeadersFrame) and frame.stream_id == ids[0]:
                answered = frame.stream_id
    print(json.dumps({"resets": {str(k): v for k, v in resets.items()}, "goaway": goaway, "closed": closed,
                      "answered": answered}))


def trailers(args):
    client = Client(args.port, args.timeout)
    stream = client.request("/upload", method="POST", body=b"payload", end=False)
    client.conn.send_headers(stream, [("x-checksum", "abc")], end_stream=True)
    client.flush()
    client.read_until(client.ended(stream))
    print(json.dumps({"reply": client.replies.get(stream)}))


def big_body(args):
    client = Client(args.port, args.timeout)
    client.conn.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 2**31 - 1})
    announced = client.request("/upload", method="POST", extra=[("content-length", str(args.limit * 4))],
                               end=False)
    client.read_until(client.ended(announced))
    unannounced = client.request("/upload", method="POST", end=False)
    sent = 0
    while sent <= args.limit and not client.ended(unannounced)() and not client.closed:
        window = client.conn.local_flow_control_window(unannounced)
        if window == 0:
            client.read_once()  # the server's WINDOW_UPDATE
            continue
        chunk = b"x" * min(16384, window)
        client.conn.send_data(unannounced, chunk)
        client.flush()
        sent += len(chunk)
    client.read_until(client.ended(unannounced))
    # Wait for the reset that follows an early reply (the server's RST_STREAM NO_ERROR).
    client.read_until(lambda: announced in client.resets and unannounced in client.resets)
    print(json.dumps({"announced": client.replies.get(announced), "announcedReset": client.resets.get(announced),
                      "unannounced": client.replies.get(unannounced),
                      "unannouncedReset": client.resets.get(unannounced)}))


def idle(args):
    client = Client(args.port, args.timeout)
    if args.half_request:
        client.request("/upload", method="POST", body=b"part", end=False)
        status = None
    else:
        stream = client.request("/hello")
        client.read_until(client.ended(stream))
        status = client.replies.get(stream, {}).get("status")
    client.read_until(lambda: False)
    print(json.dumps({"status": status, "goaway": client.goaway, "closed": client.closed}))


def no_read(args):
    sock = connect(args.port, args.timeout, receive_buffer=16384)
    conn = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=True))
    conn.initiate_connection()
    conn.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 2**31 - 1})
    conn.increment_flow_control_window(2**31 - 1 - 65535)
    for _ in range(args.count):
        conn.send_headers(conn.get_next_available_stream_id(), request_headers(args.path), end_stream=True)
    sock.sendall(conn.data_to_send())
    print("sent", flush=True)
    if args.ping_every:
        # A PING now and then makes the server produce output (its ACK) while this client reads
        # nothing: each one is a turn where the server could queue more.
        def trickle():
            while True:
                time.sleep(args.ping_every)
                conn.ping(b"islet-h2")
                sock.sendall(conn.data_to_send())
        threading.Thread(target=trickle, daemon=True).start()
    sys.stdin.read()
    os._exit(0)  # the pinging thread may be blocked in sendall


def get(args):
    client = Client(args.port, args.timeout)
    ids = []
    for _ in range(args.count):
        stream = client.conn.get_next_available_stream_id()
        client.conn.send_headers(stream, request_headers(args.path), end_stream=True)
        ids.append(stream)
    client.flush()
    client.read_until(lambda: all(client.ended(stream)() for stream in ids))
    print(json.dumps({"replies": [client.replies.get(stream) for stream in ids]}))


def main():
    parser = argparse.ArgumentParser()
    commands = parser.add_subparsers(dest="command", required=True)
    for name in ["hpack-bomb", "many-headers", "streams", "trailers", "big-body", "idle", "no-read", "get"]:
        command = commands.add_parser(name)
        command.add_argument("--port", type=int, required=True)
        command.add_argument("--timeout", type=float, default=20)
        command.add_argument("--count", type=int, default=1)
        command.add_argument("--path", default="/")
        command.add_argument("--limit", type=int, default=0)
        command.add_argument("--ack", action="store_true")
        command.add_argument("--half-request", action="store_true")
        command.add_argument("--ping-every", type=float, default=0)
    args = parser.parse_args()
    {"hpack-bomb": hpack_bomb, "many-headers": many_headers, "streams": streams, "trailers": trailers,
     "big-body": big_body, "idle": idle, "no-read": no_read, "get": get}[args.command](args)


if __name__ == "__main__":
    main()
