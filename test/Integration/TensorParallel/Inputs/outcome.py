"""Runs a command (an mpirun job), writes its output to OUT and appends one
line saying how it ended: "outcome: error" (a nonzero exit), "outcome: hung"
(killed by the timeout of lit's %mpirun, exit 124) or "outcome: success",
so that a test can tell a job that failed cleanly from one that hung.

  outcome.py OUT CMD [ARGS...]
"""
import subprocess
import sys

out, cmd = sys.argv[1], sys.argv[2:]
with open(out, "w") as f:
    rc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT).returncode
    f.write("\noutcome: %s\n" % ("success" if rc == 0 else
                                 "hung" if rc == 124 else "error"))
