#!/usr/bin/env python3
"""Misbehaving HTTP/2 clients, for the tests of the HTTP/2 listener
(Tests/IsletTransportTests/HTTP2ListenerTests.swift). Each command connects to 127.0.0.1:PORT
over TLS (ALPN h2, certificate not checked), does one thing and prints one JSON line with what
the server did; the Swift test checks it. Every wait is bounded by --timeout.

    h2_limits_client.py get --port P --count N --path P
                                                    N GETs in one write, each reply read whole
"""
import argparse
import json
import socket
import ssl

import h2.config
import h2.connection
import h2.events


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
    for name in ["get"]:
        command = commands.add_parser(name)
        command.add_argument("--port", type=int, required=True)
        command.add_argument("--timeout", type=float, default=20)
        command.add_argument("--count", type=int, default=1)
        command.add_argument("--path", default="/")
    args = parser.parse_args()
    {"get": get}[args.command](args)


if __name__ == "__main__":
    main()
