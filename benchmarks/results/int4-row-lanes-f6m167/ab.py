#!/usr/bin/env python3
"""Old build vs new build (int4 rows in lanes) vs ggml, interleaved rounds,
one run (hold the build lock so nothing else runs).

  ab.py OLD_BLOCKC_RUN NEW_BLOCKC_RUN ROUNDS [X7_DIR]

Cases: the 4096 x 14336 up + down pair (benchmarks/precision.py) at one
token on 2 and 1 threads, int4 groups of 32 and 128 (halved: one
projection) beside ggml q4_0 / q4_K (test-backend-ops, 2 threads); the
pair at 16 tokens (prefill path, 2 threads); the Llama-2-7B block at one
token on 1 thread (f32, int4 groups of 32) when X7_DIR has 7b.f32.mlir and
7b.int4.mlir. Order reversed every other round; medians.
"""
import json, os, re, statistics, subprocess, sys
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
import precision, run as bench, ggml as G  # noqa: E402

old, new, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
x7 = sys.argv[4] if len(sys.argv) > 4 else None
tmp = "/tmp/int4-row-lanes-models"; os.makedirs(tmp, exist_ok=True)
pair32 = precision.pair_model(tmp, "f32", "int4", group=32)
pair128 = precision.pair_model(tmp, "f32", "int4", group=128)
UNIT = {"us": 1e-3, "ms": 1.0, "s": 1e3}

def blockc(exe, model, T, threads, repeat):
    cmd = [exe, model, "--random-weights", "--random-input",
           "--seq-len=%d" % T, "--repeat=%d" % repeat, "--threads=%d" % threads]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=1200,
                       env=dict(os.environ))
    m = re.search(r"median ([0-9.]+) (us|ms|s)", p.stdout)
    if p.returncode or not m:
        print("FAILED", " ".join(cmd), (p.stdout + p.stderr)[-1500:], flush=True)
        return None
    return float(m.group(1)) * UNIT[m.group(2)]

cases = []
for b, exe in (("old", old), ("new", new)):
    cases += [("pair g32 T=1 2t %s" % b, exe, pair32, 1, 2, 31, 0.5),
              ("pair g128 T=1 2t %s" % b, exe, pair128, 1, 2, 31, 0.5),
              ("pair g32 T=1 1t %s" % b, exe, pair32, 1, 1, 21, 0.5),
              ("pair g32 T=16 2t %s" % b, exe, pair32, 16, 2, 11, 0.5)]
    if x7:
        cases += [("7B int4 g32 T=1 1t %s" % b, exe,
                   os.path.join(x7, "7b.int4.mlir"), 1, 1, 21, 1.0)]
if x7:
    cases += [("7B f32 T=1 1t old", old, os.path.join(x7, "7b.f32.mlir"), 1,
               1, 11, 1.0)]
# interleave old/new of each case
order = sorted(cases, key=lambda c: (c[0].rsplit(" ", 1)[0], c[0]))
res = {}
ggml_exe = "/work/ggml-build/bin/test-backend-ops"
for r in range(rounds):
    seq = order if r % 2 == 0 else list(reversed(order))
    for name, exe, model, T, th, rep, f in seq:
        ms = blockc(exe, model, T, th, rep)
        if ms is not None:
            res.setdefault(name, []).append(ms * f)
        print(r, name, ms and ms * f, flush=True)
    t, cmd = G.ggml_times(ggml_exe, ["q4_0", "q4_K"], 1, 2)
    for k, v in t.items():
        res.setdefault("ggml %s T=1 2t" % k, []).append(v / 1000)
    print(r, "ggml", t, flush=True)
print(json.dumps(res, indent=1))
for k in sorted(res):
    v = res[k]
    print("%-26s median %.3f ms  (min %.3f, max %.3f, n=%d)" % (
        k, statistics.median(v), min(v), max(v), len(v)))
