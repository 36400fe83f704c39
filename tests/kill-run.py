#!/usr/bin/env python3
"""kill-run.py WHEN N OBJECTS CMD...: run CMD in a session of its own and
kill every process of that session (a build's Ninja steps and their
sandboxes too) with SIGKILL:

  start    N milliseconds after CMD started;
  objects  as soon as CMD has put objects into N of the XX directories of
           OBJECTS (a repository's objects/): a new directory, or one whose
           modification time changed, counts (cheap enough to watch objects
           going in as they go).

Exits 0 when the kill cut CMD short, 1 when CMD had ended before it."""
import os
import signal
import subprocess
import sys
import time


def snapshot(objects):
    try:
        return {e.name: e.stat(follow_symlinks=False).st_mtime_ns for e in os.scandir(objects)}
    except FileNotFoundError:
        return {}


def changed(before, objects):
    now = snapshot(objects)
    return sum(1 for name, mtime in now.items() if before.get(name) != mtime)


def session_members(sid):
    """The live processes of the session SID (zombies are dead already)."""
    pids = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[3]) == sid:
            pids.append(int(name))
    return pids


def main():
    when, n, objects, cmd = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
    before = snapshot(objects)
    run = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           start_new_session=True)
    if when == "objects":
        while run.poll() is None and changed(before, objects) < n:
            time.sleep(0.0002)
    else:
        time.sleep(n / 1000)
    cut = run.poll() is None
    while True:
        members = session_members(run.pid)
        if not members:
            break
        for pid in members:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.005)
    run.wait()
    sys.exit(0 if cut else 1)


main()
