#!/usr/bin/env python3
"""Replays a pass pipeline printed by `blockc --dump-pass-pipeline`.

Usage: replay-pipeline.py PIPELINE_FILE BLOCKC_OPT [ARGS...]

Runs `BLOCKC_OPT --pass-pipeline=<the file's text> ARGS...` and exits with its
status. The lit tests use it to check that a dumped pipeline reproduces the
driver's IR (lit's internal shell has no command substitution).
"""

import subprocess
import sys


def main() -> int:
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(sys.argv[1], encoding="utf-8") as f:
        pipeline = f.read().strip()
    if not pipeline:
        print(f"replay-pipeline: {sys.argv[1]} is empty", file=sys.stderr)
        return 2
    command = [sys.argv[2], f"--pass-pipeline={pipeline}"] + sys.argv[3:]
    return subprocess.run(command).returncode


if __name__ == "__main__":
    sys.exit(main())
