"""`islet serve` as a child process for tests: a throwaway in-memory server on a free port."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import threading
from pathlib import Path

LISTENING = re.compile(r"listening on (http://\S+)")


def find_binary() -> str:
    """`$ISLET_BIN`, else `islet` on `PATH`, else a SwiftPM debug build in a directory above."""
    if binary := os.environ.get("ISLET_BIN"):
        return binary
    if on_path := shutil.which("islet"):
        return on_path
    for directory in [Path.cwd(), *Path.cwd().parents]:
        candidate = directory / ".build" / "debug" / "islet"
        if candidate.is_file():
            return str(candidate)
    raise FileNotFoundError("no islet binary: set ISLET_BIN, put islet on PATH, or run `swift build`")


class ServerProcess:
    """`islet serve --port 0 --db :memory: --demo off`; `url` is read from the one line it prints
    once listening (README, "islet serve"). `stop()` sends SIGTERM and waits."""

    def __init__(self, binary: str | None = None, args: tuple[str, ...] = (), start_timeout: float = 60) -> None:
        command = [binary or find_binary(), "serve", "--port", "0", "--db", ":memory:", "--demo", "off",
                   "--log-level", "warning", *args]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.output: list[str] = []
        found = threading.Event()
        self.url = ""

        def read() -> None:
            assert self.process.stdout is not None
            for line in self.process.stdout:
                self.output.append(line.rstrip())
                if not found.is_set() and (match := LISTENING.search(line)):
                    self.url = match.group(1)
                    found.set()
            found.set()

        threading.Thread(target=read, name="islet-serve-output", daemon=True).start()
        if not found.wait(start_timeout) or not self.url:
            self.stop()
            raise RuntimeError("islet serve did not start:\n" + "\n".join(self.output))

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
