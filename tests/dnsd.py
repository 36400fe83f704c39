#!/usr/bin/env python3
"""A minimal DNS server on 127.0.0.1 for the hermetic tests.

    dnsd.py NAME LOGFILE READYFILE [PORT]

Answers UDP queries on 127.0.0.1:PORT (default 53): an A query for NAME
gets 127.0.0.1, an AAAA query for NAME an empty answer (NOERROR, no
records, as a host with no IPv6 address has), anything else NXDOMAIN.
Each query is appended to LOGFILE as one line, "TYPE NAME" (e.g.
"A mirror.a2o.test", "AAAA mirror.a2o.test", "TYPE65 mirror.a2o.test"), so
a test can count the name lookups a program made.  READYFILE is written
once the socket is bound.  The standard library only; no TCP, no EDNS, no
compression in what it reads (resolvers send none in a question).
"""
import os
import socket
import struct
import sys

QTYPES = {1: "A", 28: "AAAA"}
CLASS_IN = 1
RCODE_NXDOMAIN = 3
TTL = 60


def read_question(packet):
    """The question's name (lower case, no trailing dot), type and class,
    and the offset just past it; None for a packet that is not one plain
    question."""
    if len(packet) < 12:
        return None
    qdcount = struct.unpack("!H", packet[4:6])[0]
    if qdcount != 1:
        return None
    labels, pos = [], 12
    while True:
        if pos >= len(packet):
            return None
        length = packet[pos]
        pos += 1
        if length == 0:
            break
        if length > 63 or pos + length > len(packet):
            return None
        labels.append(packet[pos : pos + length].decode("ascii", "replace"))
        pos += length
    if pos + 4 > len(packet):
        return None
    qtype, qclass = struct.unpack("!HH", packet[pos : pos + 4])
    return ".".join(labels).lower(), qtype, qclass, pos + 4


def answer(packet, name):
    """The reply to PACKET, or None to ignore it."""
    question = read_question(packet)
    if question is None:
        return None, None
    qname, qtype, qclass, end = question
    query_id, flags = struct.unpack("!HH", packet[0:4])
    records = b""
    rcode = 0
    if qname != name or qclass != CLASS_IN:
        rcode = RCODE_NXDOMAIN
    elif qtype == 1:
        # The name as a pointer to the question's (offset 12).
        records = struct.pack("!HHHIH", 0xC00C, 1, CLASS_IN, TTL, 4) + socket.inet_aton("127.0.0.1")
    elif qtype != 28:
        rcode = RCODE_NXDOMAIN
    # QR, the query's opcode and RD, AA, RA.
    reply_flags = 0x8000 | (flags & 0x7900) | 0x0400 | 0x0080 | rcode
    header = struct.pack("!HHHHHH", query_id, reply_flags, 1, 1 if records else 0, 0, 0)
    line = "%s %s" % (QTYPES.get(qtype, "TYPE%d" % qtype), qname)
    return header + packet[12:end] + records, line


def main():
    name, logfile, readyfile = sys.argv[1].lower().rstrip("."), sys.argv[2], sys.argv[3]
    port = int(sys.argv[4]) if len(sys.argv) > 4 else 53
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", port))
    with open(readyfile + ".tmp", "w") as f:
        f.write("%d\n" % sock.getsockname()[1])
    os.rename(readyfile + ".tmp", readyfile)
    while True:
        packet, peer = sock.recvfrom(4096)
        reply, line = answer(packet, name)
        if reply is None:
            continue
        with open(logfile, "a") as f:
            f.write(line + "\n")
        sock.sendto(reply, peer)


if __name__ == "__main__":
    main()
