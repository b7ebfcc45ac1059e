"""The processes an import forks hold none of the importer's sockets and die with it (issue 35, finding 2): checked
from inside such a process. The live-worker kills are in tests/faults/test_faults_worker.py."""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import stat

import pytest

from datasets_build.processes import _Processes

PR_GET_PDEATHSIG = 2


def _seen_from_inside(fd: int) -> dict[str, object]:
    """What a forked process sees: whether ``fd`` is still a socket, the signal it gets when its parent dies."""
    found = ctypes.c_int(0)
    ctypes.CDLL(None, use_errno=True).prctl(PR_GET_PDEATHSIG, ctypes.byref(found), 0, 0, 0)
    return {"socket": stat.S_ISSOCK(os.fstat(fd).st_mode), "death_signal": found.value}


@pytest.mark.skipif(not os.path.exists("/proc/self/fd"), reason="Linux only (PR_SET_PDEATHSIG, /proc)")
def test_a_forked_process_lets_go_of_inherited_sockets_without_closing_the_importers_connection():
    importer, server = socket.socketpair()  # stands for the importer's database connection and its server
    with importer, server:
        with _Processes(1) as processes:
            seen = processes.result(processes.submit(_seen_from_inside, importer.fileno()))
        assert seen == {"socket": False, "death_signal": signal.SIGKILL}
        # Nothing reached the other end (no Terminate, no shutdown), and the importer's connection still works.
        server.setblocking(False)
        with pytest.raises(BlockingIOError):
            server.recv(1)
        importer.sendall(b"still here")
        server.setblocking(True)
        assert server.recv(10) == b"still here"
