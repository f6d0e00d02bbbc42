#!/usr/bin/env python3
"""Vector spills and reloads in the innermost loops of x86 assembly.

Reads LLVM's verbose assembly (blockc -emit=asm), where the backend marks
loop headers ("This Inner Loop Header" for innermost loops), the loop of
every block ("in Loop: Header=...") and each spill or reload ("64-byte
Spill", "32-byte Folded Reload", ...). Prints, for the selected functions
(by default the OpenMP-outlined kernel bodies, names containing
"omp_par", and the micro-kernels they call, names containing "_micro"),
how many innermost loops they have, how many vector (16-, 32-
or 64-byte) spills and reloads those loops contain, and which vector
registers (xmm/ymm/zmm) their FMAs use; separately for the register-tiled
micro-kernel loops: innermost loops whose FMAs accumulate into at least 8
distinct registers (a tile of independent accumulators, as opposed to the
chained FMAs of a polynomial). With --all, every function.

Usage: innermost_spills.py FILE.s [--all] [--verbose]
"""
import argparse
import collections
import re
import sys

VECTOR_SPILL = re.compile(r"# (16|32|64)-byte (Folded )?(Spill|Reload)")
LABEL = re.compile(r"^(\.LBB\d+_\d+):|^# (%bb\.\d+):")
FUNC = re.compile(r"^([A-Za-z_][\w.$]*):")


def analyse(lines, select):
    func = None
    loop = None  # (function, header) of the current block
    inner = set()
    spills = collections.Counter()
    fma_regs = collections.defaultdict(set)
    fma_dests = collections.defaultdict(set)
    funcs = set()
    for i, line in enumerate(lines):
        m = FUNC.match(line)
        if m:
            func = m.group(1)
            loop = None
            if select(func):
                funcs.add(func)
            continue
        m = LABEL.match(line)
        if m:
            label = (m.group(1) or m.group(2)).lstrip(".")
            loop = None
            # The block's comments: on its line and the comment-only lines
            # after it.
            j = i
            while True:
                comment = lines[j]
                h = re.search(r"in Loop: Header=(\S+) Depth", comment)
                if h and loop is None:
                    loop = (func, h.group(1))
                if "Inner Loop Header" in comment:
                    loop = (func, label)
                    inner.add(loop)
                elif "Loop Header" in comment and loop is None:
                    loop = (func, label)
                j += 1
                if j >= len(lines) or not lines[j].lstrip().startswith("#"):
                    break
            continue
        if loop is None or not select(func):
            continue
        if VECTOR_SPILL.search(line):
            spills[loop] += 1
        if re.search(r"\bvfn?m(add|sub)\d+[ps]s\b", line):
            regs = re.findall(r"%([xyz]mm\d+)", line.split("#")[0])
            for reg in regs:
                fma_regs[loop].add(reg[:3])
            if regs:
                fma_dests[loop].add(regs[-1])
    loops = [l for l in inner if select(l[0])]
    return funcs, loops, spills, fma_regs, fma_dests


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("asm")
    ap.add_argument("--all", action="store_true",
                    help="every function, not only the omp_par kernels and "
                    "their _micro kernels")
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args()
    with open(a.asm) as f:
        lines = f.read().split("\n")
    select = (lambda f: f is not None) if a.all else \
        (lambda f: f is not None and ("omp_par" in f or "_micro" in f))
    funcs, loops, spills, fma_regs, fma_dests = analyse(lines, select)
    tiles = [l for l in loops if len(fma_dests[l]) >= 8]
    bad = {l: spills[l] for l in loops if spills[l]}
    regs = set()
    for l in loops:
        regs |= fma_regs[l]
    print("functions: %d" % len(funcs))
    print("innermost loops: %d" % len(loops))
    print("innermost loops with FMAs: %d" %
          sum(1 for l in loops if fma_regs[l]))
    print("FMA registers in innermost loops: %s" %
          (" ".join(sorted(regs)) or "none"))
    print("vector spills or reloads in innermost loops: %d" %
          sum(bad.values()))
    print("micro-kernel loops (>= 8 FMA accumulators): %d" % len(tiles))
    print("vector spills or reloads in micro-kernel loops: %d" %
          sum(spills[l] for l in tiles))
    if a.verbose:
        for (func, header), n in sorted(bad.items()):
            print("  %s %s: %d" % (func, header, n))
    return 0


if __name__ == "__main__":
    sys.exit(main())
