#!/usr/bin/env python3
"""A forward HTTP proxy on 127.0.0.1 for the hermetic tests, in the
apt-cacher-ng style (a plain HTTP proxy that http:// URLs go through).

    proxy.py PORTFILE LOGFILE [NAME=ADDRESS]...

Listens on a free port and writes the port number to PORTFILE once it
listens.  Every request it forwards is appended to LOGFILE as
"METHOD URL", so a test can prove what went (or did not go) through it.
NAME=ADDRESS makes the proxy connect to ADDRESS for the host NAME: a
name only the proxy can resolve (e.g. repo.invalid=127.0.0.1) proves that
a client reached the server through the proxy and not directly.  A
request that is not for an absolute http:// URL (a client that took the
proxy for the server) is logged as "NOT-PROXIED PATH" and answered 400.
"""
import http.client
import http.server
import os
import sys
import threading
import urllib.parse

portfile, logfile = sys.argv[1], sys.argv[2]
names = dict(arg.split("=", 1) for arg in sys.argv[3:])
lock = threading.Lock()
HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "proxy-authorization",
              "te", "trailers", "transfer-encoding", "upgrade"}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def _log(self, line):
        with lock, open(logfile, "a") as f:
            f.write(line + "\n")

    def _refuse(self):
        self._log("NOT-PROXIED " + self.path)
        self.send_error(400, "not a proxy request")

    def _forward(self):
        url = urllib.parse.urlsplit(self.path)
        if url.scheme != "http" or not url.hostname:
            return self._refuse()
        self._log(self.command + " " + self.path)
        address = names.get(url.hostname, url.hostname)
        upstream = http.client.HTTPConnection(address, url.port or 80, timeout=60)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
        target = url.path + ("?" + url.query if url.query else "")
        try:
            upstream.request(self.command, target or "/", headers=headers)
            response = upstream.getresponse()
        except OSError as e:
            self.send_error(502, "cannot reach %s: %s" % (url.hostname, e))
            return
        self.send_response(response.status, response.reason)
        length = response.getheader("Content-Length")
        for k, v in response.getheaders():
            if k.lower() not in HOP_BY_HOP:
                self.send_header(k, v)
        if length is None:
            self.close_connection = True
        self.end_headers()
        while self.command != "HEAD":
            piece = response.read1(64 * 1024)
            if not piece:
                break
            self.wfile.write(piece)
            self.wfile.flush()
        upstream.close()

    do_GET = _forward
    do_HEAD = _forward


class Server(http.server.ThreadingHTTPServer):
    # As tests/httpd.py: not socketserver's backlog of 5, which dropped the
    # SYNs of a client opening more connections at once for a second.
    request_queue_size = 128


server = Server(("127.0.0.1", 0), Handler)
server.daemon_threads = True
tmp = portfile + ".tmp"
with open(tmp, "w") as f:
    f.write(str(server.server_address[1]))
os.rename(tmp, portfile)
server.serve_forever()
