"""Runs a command under a pseudo-terminal and relays it: this process's stdin goes to the
terminal as typed keys, the terminal's output comes out on stdout. Tests use it to see a
program as a person at a terminal does. Exits with the command's exit code."""
import os
import pty
import select
import sys

pid, master = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])

stdin = sys.stdin.fileno()
open_fds = [master, stdin]
while master in open_fds:
    ready, _, _ = select.select(open_fds, [], [], 120)
    if not ready:
        break
    for fd in ready:
        try:
            data = os.read(fd, 4096)
        except OSError:
            data = b""
        if fd == master:
            if not data:
                open_fds.remove(master)
            else:
                sys.stdout.buffer.write(data)
                sys.stdout.flush()
        elif not data:
            open_fds.remove(stdin)
        else:
            os.write(master, data)
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status))
