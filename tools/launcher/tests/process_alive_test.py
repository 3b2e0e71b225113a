#!/usr/bin/env python3
"""Unit test of duo's process_alive(): a process counts as alive while any of its threads
runs, not only its main thread.

The case `duo down && duo up` tripped over: a daemon's main thread has exited (it shows
as a zombie) while another thread still holds the listening socket. Here a child makes
exactly that state (its main thread leaves with the raw exit system call, a second
thread keeps a listening socket); process_alive must say alive and the port must indeed
still be taken. After SIGKILL the process is not alive, even before it is reaped.
"""

import importlib.machinery
import importlib.util
import os
import platform
import signal
import socket
import subprocess
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
_loader = importlib.machinery.SourceFileLoader("duo", os.path.join(HERE, "..", "duo.py"))
_spec = importlib.util.spec_from_loader("duo", _loader)
duo = importlib.util.module_from_spec(_spec)
_loader.exec_module(duo)

# The thread-exit system call differs by architecture (x86_64 60, aarch64 93).
SYS_EXIT = {"x86_64": 60, "aarch64": 93}

CHILD = r"""
import ctypes, socket, sys, threading, time
listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen()
print(listener.getsockname()[1], flush=True)
threading.Thread(target=lambda: time.sleep(3600), daemon=False).start()
ctypes.CDLL(None, use_errno=True).syscall(int(sys.argv[1]), 0)  # ends the main thread only
"""


def thread_states(pid):
    states = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
            states[int(tid)] = f.read().rsplit(")", 1)[-1].split()[0]
    return states


class ProcessAliveTest(unittest.TestCase):
    @unittest.skipUnless(platform.machine() in SYS_EXIT, "no exit syscall number known")
    def test_zombie_main_thread_with_live_thread_is_alive(self):
        child = subprocess.Popen([sys.executable, "-c", CHILD, str(SYS_EXIT[platform.machine()])],
                                 stdout=subprocess.PIPE)
        try:
            port = int(child.stdout.readline())
            for _ in range(500):  # wait (bounded) until the main thread has exited
                if thread_states(child.pid).get(child.pid) == "Z":
                    break
                time.sleep(0.01)
            states = thread_states(child.pid)
            self.assertEqual(states[child.pid], "Z", states)
            self.assertTrue(any(s != "Z" for t, s in states.items() if t != child.pid), states)
            self.assertTrue(duo.process_alive(child.pid))
            probe = socket.socket()
            with self.assertRaises(OSError):  # the live thread still holds the port
                probe.bind(("127.0.0.1", port))
            probe.close()
        finally:
            child.send_signal(signal.SIGKILL)
        for _ in range(500):  # not reaped yet: a zombie with no live thread
            if not duo.process_alive(child.pid):
                break
            time.sleep(0.01)
        self.assertFalse(duo.process_alive(child.pid))
        child.wait()
        self.assertFalse(duo.process_alive(child.pid))

    def test_running_and_gone(self):
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
        self.assertTrue(duo.process_alive(child.pid))
        child.kill()
        child.wait()
        self.assertFalse(duo.process_alive(child.pid))


if __name__ == "__main__":
    unittest.main()
