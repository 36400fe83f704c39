#!/usr/bin/python3
# bench/delay-proxy.py PORTFILE TARGET_PORT RTT_MS: a TCP proxy on
# 127.0.0.1 (its port written to PORTFILE) in front of 127.0.0.1:TARGET_PORT
# that holds every byte for half of RTT_MS milliseconds each way: a server
# that far away, for bench/cache.sh and bench/build.sh.  (The kernel's
# netem does this better where it is built in; this needs nothing but
# Python.)
import asyncio
import os
import sys
import time

port_file, target, rtt = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]) / 1000.0

async def pipe(reader, writer, delay):
    q = asyncio.Queue()
    async def rd():
        while True:
            data = await reader.read(1 << 16)
            await q.put((time.monotonic() + delay, data))
            if not data:
                return
    async def wr():
        while True:
            due, data = await q.get()
            now = time.monotonic()
            if due > now:
                await asyncio.sleep(due - now)
            if not data:
                try:
                    writer.write_eof()
                except OSError:
                    pass
                return
            writer.write(data)
            await writer.drain()
    try:
        await asyncio.gather(rd(), wr())
    except (ConnectionError, OSError):
        pass
    finally:
        writer.close()

async def handle(creader, cwriter):
    sreader, swriter = await asyncio.open_connection("127.0.0.1", target)
    await asyncio.gather(pipe(creader, swriter, rtt / 2), pipe(sreader, cwriter, rtt / 2))

async def main():
    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    with open(port_file + ".tmp", "w") as f:
        f.write(str(server.sockets[0].getsockname()[1]))
    os.rename(port_file + ".tmp", port_file)
    async with server:
        await server.serve_forever()

asyncio.run(main())
