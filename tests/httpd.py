#!/usr/bin/env python3
"""A static file server on 127.0.0.1 for the hermetic tests.

    httpd.py [--keep-alive] [--connection-log FILE] ROOT PORTFILE [LOGFILE]

Serves ROOT on a free port and writes the port number to PORTFILE once it
listens.  Every request path is appended to LOGFILE when given, so a test can
prove what was (not) fetched.  It speaks HTTP/1.0 and closes the connection
after each answer, unless --keep-alive: then HTTP/1.1 with persistent
connections, as a real mirror.  --connection-log FILE appends one line to
FILE for each TCP connection accepted ("connection from 127.0.0.1:PORT"),
so a test can count the connections a client opened.  Faults for the
error-path tests are asked for with a path prefix:

    /fault/status-CODE/PATH   answer CODE (e.g. 503, 404) every time
    /fault/flaky-N/PATH       answer 503 to the first N requests, then serve
    /fault/truncate/PATH      announce the full length, send half, close
    /fault/slow/PATH          serve PATH in 256 KiB pieces, 0.1 s apart
    /fault/reset-N/PATH       reset the connection (TCP RST) on the first N
                              requests, then serve
    /fault/hang/PATH          announce PATH's length, send nothing, hold the
                              connection open for a minute
    /fault/die-N/PATH         serve the first N requests, then the whole
                              server exits (a server dying mid-transfer)
    /fault/trickle-N/PATH     serve PATH; a file over N bytes is sent 2 bytes
                              a second (its full length announced)
    /fault/gate-N/PATH        serve PATH; a file over 16 MiB waits after its
                              first 16 MiB (sent through a 64 KiB send buffer)
                              until N such files have got there, or 5 s have
                              passed; then the gate stays open, and
                              "gate: N together" or "gate: timed out" is
                              appended to LOGFILE once (how many large
                              bodies a client reads at once)
"""
import argparse
import http.server
import os
import re
import socket
import struct
import threading
import time

parser = argparse.ArgumentParser()
parser.add_argument("--keep-alive", action="store_true")
parser.add_argument("--connection-log")
parser.add_argument("root")
parser.add_argument("portfile")
parser.add_argument("logfile", nargs="?")
options = parser.parse_args()
root, portfile, logfile = options.root, options.portfile, options.logfile
flaky_counts = {}
lock = threading.Lock()
GATE_AT = 16 * 1024 * 1024
gate = {"waiting": 0, "open": False}
gate_changed = threading.Condition(lock)


class Handler(http.server.SimpleHTTPRequestHandler):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, directory=root, **kwargs)

    if options.keep_alive:
        protocol_version = "HTTP/1.1"

    def setup(self):
        super().setup()
        if options.connection_log:
            with lock, open(options.connection_log, "a") as f:
                f.write("connection from %s:%d\n" % self.client_address[:2])

    def log_message(self, fmt, *args):
        pass

    def _log(self, line=None):
        if logfile:
            with lock, open(logfile, "a") as f:
                f.write((line or self.path) + "\n")

    def _gate(self, want):
        with gate_changed:
            gate["waiting"] += 1
            gate_changed.notify_all()
            together = gate_changed.wait_for(
                lambda: gate["open"] or gate["waiting"] >= want, timeout=5)
            if gate["open"]:
                return
            gate["open"] = True
            gate_changed.notify_all()
        self._log("gate: " + ("%d together" % want if together else "timed out"))

    def _start_file(self, rest):
        """Send the status line and headers for the file at REST; return
        its bytes, or None after a 404."""
        try:
            data = open(self.translate_path(rest), "rb").read()
        except OSError:
            self.send_error(404)
            return None
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        return data

    def do_GET(self):
        self._log()
        m = re.match(r"^/fault/([a-z]+)(?:-(\d+))?(/.*)$", self.path)
        if not m:
            return super().do_GET()
        kind, num, rest = m.group(1), m.group(2), m.group(3)
        if kind == "status":
            self.send_error(int(num))
            return
        if kind == "flaky":
            with lock:
                seen = flaky_counts.get(rest, 0)
                flaky_counts[rest] = seen + 1
            if seen < int(num):
                self.send_error(503)
                return
            self.path = rest
            return super().do_GET()
        if kind == "truncate":
            data = self._start_file(rest)
            if data is None:
                return
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        if kind == "reset":
            with lock:
                seen = flaky_counts.get("reset" + rest, 0)
                flaky_counts["reset" + rest] = seen + 1
            if seen < int(num):
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                           struct.pack("ii", 1, 0))
                self.close_connection = True
                return
            self.path = rest
            return super().do_GET()
        if kind == "die":
            with lock:
                seen = flaky_counts.get("die", 0)
                flaky_counts["die"] = seen + 1
            if seen >= int(num):
                os._exit(0)
            self.path = rest
            return super().do_GET()
        if kind == "hang":
            path = self.translate_path(rest)
            size = os.path.getsize(path) if os.path.exists(path) else 1000
            self.send_response(200)
            self.send_header("Content-Length", str(size))
            self.end_headers()
            self.wfile.flush()
            time.sleep(60)
            self.close_connection = True
            return
        if kind == "gate":
            path = self.translate_path(rest)
            if not os.path.isfile(path) or os.path.getsize(path) <= GATE_AT:
                self.path = rest
                return super().do_GET()
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 65536)
            data = self._start_file(rest)
            if data is None:
                return
            self.wfile.write(data[:GATE_AT])
            self.wfile.flush()
            self._gate(int(num))
            self.wfile.write(data[GATE_AT:])
            return
        if kind == "trickle":
            path = self.translate_path(rest)
            if not os.path.isfile(path) or os.path.getsize(path) <= int(num):
                self.path = rest
                return super().do_GET()
            data = self._start_file(rest)
            if data is None:
                return
            try:
                for i in range(0, len(data), 2):
                    self.wfile.write(data[i : i + 2])
                    self.wfile.flush()
                    time.sleep(1)
            except OSError:
                pass
            self.close_connection = True
            return
        if kind == "slow":
            data = self._start_file(rest)
            if data is None:
                return
            for i in range(0, len(data), 256 * 1024):
                self.wfile.write(data[i : i + 256 * 1024])
                self.wfile.flush()
                time.sleep(0.1)
            return
        self.send_error(400)


class Server(http.server.ThreadingHTTPServer):
    # socketserver's backlog is 5: a client opening more connections at
    # once (a cache pull opens one per object) had its extra SYNs dropped
    # and sent again a second later, as no real mirror would make it wait.
    request_queue_size = 128


server = Server(("127.0.0.1", 0), Handler)
tmp = portfile + ".tmp"
with open(tmp, "w") as f:
    f.write(str(server.server_address[1]))
os.rename(tmp, portfile)
server.serve_forever()
