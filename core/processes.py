"""This process named as a holder of work, and whether a named holder's process is gone.

A shard (judging/engine/workers.py) and a provider batch's step (judging/batching.py) record the
process holding them as `host:pid:namespace`. A process killed on this machine (the OOM killer,
`kill -9`, a container restart) can be known dead at once: its pid is gone. Only a process in
this machine's own pid namespace can be checked; any other holder is judged by its heartbeat or
its lease alone, so a process that is alive is never mistaken for a dead one. Pure: no Django.
"""

from __future__ import annotations

import os
import socket


def _pid_namespace() -> str:
    """This process's pid namespace (a container has its own), or "" where /proc has none."""
    try:
        return str(os.stat("/proc/self/ns/pid").st_ino)
    except OSError:
        return ""


def worker_name() -> str:
    """This process as a holder: host, pid and pid namespace."""
    return f"{socket.gethostname()}:{os.getpid()}:{_pid_namespace()}"


def worker_is_gone(worker_id: str) -> bool:
    """True only when `worker_id` names a process of this machine and pid namespace that no
    longer exists. Anything else (another machine, another container, a name that is not ours,
    a process that still runs) is False: its heartbeat decides."""
    host, _, rest = (worker_id or "").partition(":")
    pid, _, namespace = rest.partition(":")
    if host != socket.gethostname() or not pid.isdigit() or not namespace or namespace != _pid_namespace():
        return False
    if int(pid) == os.getpid():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # it exists, under another user
        return False
    return False
