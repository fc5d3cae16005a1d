#!/usr/bin/env python3
"""Two commands timed in turns: A, B, A, B, ... (bench/masking.sh: A
masked, B the same with `--no-mask`).

    bench/interleave.py NAME RUNS PREPARE CMD_A CMD_B

hyperfine runs all of one command's rounds, then all of the other's, so
a change in a shared host's load between the two halves lands on one
command only: on this host `bench/masking.sh` read a short command's
masking at +2.2 ms that way and +1.0 ms with the rounds in turns.
Here each round runs PREPARE (a shell command, `true` for none), then A,
then PREPARE, then B, after one untimed warm-up round; each command is
started directly (no shell), its output discarded. A command that
cannot be started (126, 127), dies of a signal, or exits otherwise than
the other one did stops the bench with its argv and status: a failing
command is fast, and its times would read as a ratio of nothing (an
exit code both share, such as `extract`'s 2 for invalid replies, is the
commands' answer). Prints one line:
median wall time and median CPU time (user + system, from `wait4`) of
each, and B's ratio A/B, as `bench/masking.sh` has printed them.
"""

import os
import shlex
import statistics
import subprocess
import sys
import time


def timed(argv):
    """Wall and CPU seconds of one run of `argv`."""
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        try:
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    return wall, usage.ru_utime + usage.ru_stime, os.waitstatus_to_exitcode(status)


def main():
    if len(sys.argv) != 6:
        print("usage: bench/interleave.py NAME RUNS PREPARE CMD_A CMD_B", file=sys.stderr)
        sys.exit(64)
    name, runs, prepare, a, b = sys.argv[1:]
    commands = [shlex.split(a), shlex.split(b)]
    times = [([], []), ([], [])]
    codes = [None, None]
    for round_ in range(int(runs) + 1):
        for i, argv in enumerate(commands):
            subprocess.run(prepare, shell=True, check=False)
            wall, cpu, code = timed(argv)
            codes[i] = code
            if code in (126, 127) or code < 0 or (i == 1 and code != codes[0]):
                sys.exit(f"bench/interleave.py: {shlex.join(argv)} exited {code} ({codes[0]} for A)")
            if round_ > 0:
                times[i][0].append(wall)
                times[i][1].append(cpu)
    (mw, mc), (nw, nc) = [(statistics.median(w), statistics.median(c)) for w, c in times]
    print(
        f"{name:24} masked {mw * 1e3:8.1f} ms  no-mask {nw * 1e3:8.1f} ms  "
        f"wall x{mw / nw:.2f}  (+{(mw - nw) * 1e3:.1f} ms)  "
        f"cpu {mc * 1e3:.1f} vs {nc * 1e3:.1f} ms x{mc / nc:.2f}"
    )


if __name__ == "__main__":
    main()
