#!/usr/bin/env python3
"""blockc against ggml (llama.cpp's tensor library) per weight type: one
4096 x 14336 projection (K = 14336 -> N = 4096, the down projection of a
7B-class MLP) at one token and at 512 tokens, on the threads of the
machine, in the same run.

  benchmarks/ggml.py --ggml-build=DIR [--rounds 3] [--repeat 10] [--out DIR]

DIR is a CPU build of ggml (https://github.com/ggml-org/ggml or the ggml of
llama.cpp) with its tests, built natively on this machine, e.g.

  cmake -S ggml -B DIR -G Ninja -DCMAKE_BUILD_TYPE=Release \\
      -DGGML_NATIVE=ON -DGGML_BUILD_TESTS=ON && ninja -C DIR test-backend-ops

ggml's side is `DIR/bin/test-backend-ops perf -o MUL_MAT -b CPU` on its own
case `type_a=T, type_b=f32, m=4096, n=1|512, k=14336` (ggml's perf list has
it), which runs on std::thread::hardware_concurrency() threads. blockc's side
is benchmarks/precision.py's up + down pair (4096 -> 14336 -> 4096, each
projection of the same size) on as many threads, halved, with the weights
in the matching type: f32, bf16, int8 (ggml q8_0: blocks of 32 with an f16
scale; blockc: an f32 scale per row) and int4 (ggml q4_0: blocks of 32 with
an f16 scale, and q4_K: super-blocks of 256 with 6-bit sub-scales; blockc:
groups of 32 or 128 with an f32 scale), weight-only and with
--quantize-activations=int8 (ggml's quantised products always quantise the
activations). The types are not byte-identical formats: the table gives
each one's bytes per weight.

Results: DIR/ggml.json and DIR/ggml.md (default
benchmarks/results/ggml-<machine>/).
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import precision  # noqa: E402  (the pair model)
import run as bench  # noqa: E402  (shared probes, parsing, peers)

# blockc type, (pair_model's dtype, quantisation[, activations]), ggml
# types, bytes per weight of blockc's type, int4 group size.
TYPES = [
    ("f32", ("f32", None), ["f32"], 4.0, 32),
    ("bf16", ("bf16", None), ["bf16"], 2.0, 32),
    ("int8", ("f32", "int8"), ["q8_0"], 1.0, 32),
    ("int4", ("f32", "int4"), ["q4_0", "q4_K"], 0.5 + 4.0 / 32, 32),
    # Groups of 128: one f32 scale per 128 weights (0.53 bytes per weight,
    # q4_K's 0.56), and one table per 4 chunks in the decode kernel.
    ("int4 g128", ("f32", "int4"), ["q4_0", "q4_K"], 0.5 + 4.0 / 128, 128),
    # ggml's quantised products quantise the activations to 8 bits per
    # block of 32 (q8_0) or 256 (q8_K) and multiply integers: blockc's
    # --quantize-activations=int8 does the same per run of 32.
    ("int8+act", ("f32", "int8", "int8"), ["q8_0"], 1.0, 32),
    ("int4+act", ("f32", "int4", "int8"), ["q4_0", "q4_K"], 0.5 + 4.0 / 32,
     32),
]
GGML_BYTES = {"f32": 4.0, "bf16": 2.0, "q8_0": 34.0 / 32, "q4_0": 18.0 / 32,
              "q4_K": 144.0 / 256}
M, K = 4096, 14336


def ggml_times(exe, types, n, threads):
    """{ggml type: microseconds per MUL_MAT} from one test-backend-ops run
    (its console lines: `MUL_MAT(type_a=T,...): R runs - X us/run - ...`)."""
    pattern = "type_a=(%s),type_b=f32,m=%d,n=%d,k=%d," % (
        "|".join(types), M, n, K)
    cmd = [exe, "perf", "-o", "MUL_MAT", "-b", "CPU", "-p", pattern]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=1800,
                       env=bench.peer_env(threads))
    if p.returncode:
        raise RuntimeError("%s failed:\n%s" % (" ".join(cmd),
                                              (p.stdout + p.stderr)[-2000:]))
    out = {}
    for m in re.finditer(r"MUL_MAT\(type_a=([A-Za-z0-9_]+),[^)]*\):\s+\d+ "
                         r"runs -\s+([0-9.]+) us/run", p.stdout):
        out[m.group(1)] = float(m.group(2))
    return out, " ".join(cmd)


def ggml_source(build):
    """The ggml source revision of a build directory (from its CMakeCache),
    or None."""
    try:
        with open(os.path.join(build, "CMakeCache.txt")) as fh:
            for line in fh:
                if line.startswith("CMAKE_HOME_DIRECTORY:INTERNAL="):
                    src = line.split("=", 1)[1].strip()
                    rev = bench.sh(["git", "-C", src, "log", "-1",
                                    "--format=%h %cs %s"])
                    return rev or "%s (not a git checkout)" % src
    except OSError:
        pass
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ggml-build", required=True,
                    help="a ggml build directory with bin/test-backend-ops")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--out", default=None)
    ap.add_argument("--types", default=None,
                    help="comma-separated subset of blockc's types (default: "
                         "all): " + ", ".join(t[0] for t in TYPES))
    a = ap.parse_args()
    types = TYPES
    if a.types:
        wanted = a.types.split(",")
        unknown = set(wanted) - set(t[0] for t in TYPES)
        if unknown:
            ap.error("unknown --types: %s" % ",".join(sorted(unknown)))
        types = [t for t in TYPES if t[0] in wanted]
    exe = os.path.join(a.ggml_build, "bin", "test-backend-ops")
    if not os.access(exe, os.X_OK):
        sys.exit("ggml.py: %s is not an executable: build ggml's tests "
                 "there first (see --help)" % exe)
    machine = bench.machine_info()
    threads = os.cpu_count() or 1
    tmp = tempfile.mkdtemp(prefix="blockc-ggml-")
    _, exes = bench.build_probes(tmp)
    probes = [bench.run_probes(exes, threads, False)]
    pairs = {}
    for name, (dt, q, *act), _, _, group in types:
        # With `act`, the same pair with the activations quantised too.
        path = precision.pair_model(tmp, dt, q, group=group, act=bool(act))
        pairs[name] = path
    blockc_ms, ggml_us, commands = {}, {}, {}
    for rnd in range(a.rounds):
        for n in (1, 512):
            for name, _, gtypes, _, _ in types:
                bench.log("round %d T=%d blockc %s" % (rnd + 1, n, name))
                r = bench.measure_blockc(pairs[name], n, threads,
                                         a.repeat if n > 1 else 3 * a.repeat)
                if "median_ms" in r:
                    # One projection: half the pair.
                    blockc_ms.setdefault((name, n), []).append(
                        r["median_ms"] / 2)
                commands["blockc"] = r.get("command")
                bench.log("round %d T=%d ggml %s" % (rnd + 1, n,
                                                     ",".join(gtypes)))
                times, cmd = ggml_times(exe, gtypes, n, threads)
                commands["ggml"] = cmd
                for t, us in times.items():
                    ggml_us.setdefault((t, n), []).append(us)
    probes.append(bench.run_probes(exes, threads, False))
    _, triad = bench.limits(probes, threads)

    rows = []
    for n in (1, 512):
        for name, _, gtypes, bpw, _ in types:
            ms = blockc_ms.get((name, n))
            row = {"T": n, "type": name, "blockc_ms":
                   statistics.median(ms) if ms else None,
                   "blockc_bytes_per_weight": bpw, "ggml": []}
            for t in gtypes:
                us = ggml_us.get((t, n))
                row["ggml"].append({
                    "type": t, "bytes_per_weight": GGML_BYTES[t],
                    "ms": statistics.median(us) / 1000 if us else None})
            rows.append(row)
    report = {"machine": machine, "threads": threads, "rounds": a.rounds,
              "repeat": a.repeat, "triad_gb_s": triad, "rows": rows,
              "commands": commands, "ggml_build": os.path.abspath(a.ggml_build),
              "ggml_source": ggml_source(a.ggml_build),
              "blockc": bench.blockc_version()}
    out = a.out or os.path.join(bench.ROOT, "benchmarks", "results",
                                "ggml-" + bench.machine_slug(machine))
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "ggml.json"), "w") as fh:
        json.dump(report, fh, indent=1)
    with open(os.path.join(out, "ggml.md"), "w") as fh:
        fh.write(markdown(report))
    print(markdown(report))


def markdown(r):
    m = r["machine"]
    flops = 2.0 * M * K
    lines = [
        "# blockc and ggml: one 4096 x 14336 projection per type", "",
        "Machine: %s; %d threads for both; triad %s GB/s (%d threads) in "
        "the same run. %d rounds, interleaved; medians. ggml: `%s`; blockc: "
        "half of `%s` (an up + down pair). ggml source: %s." % (
            "%s (%s, %s)" % (m.get("model_name", "?"),
                             m.get("cpu_family_model", "?"), m.get("isa", "?")),
            r["threads"],
            bench.fmt(r["triad_gb_s"]), r["threads"], r["rounds"],
            r["commands"].get("ggml", "?"), r["commands"].get("blockc", "?"),
            r.get("ggml_source") or "unknown"),
        "",
        "| tokens | blockc type | blockc | GB/s | ggml type | ggml | GB/s "
        "| ggml / blockc |",
        "|---|---|---|---|---|---|---|---|"]
    for row in r["rows"]:
        n = row["T"]
        for g in row["ggml"]:
            bms, gms = row["blockc_ms"], g["ms"]

            def rate(ms, bpw):
                if not ms:
                    return "–"
                if n == 1:
                    return "%.1f" % (M * K * bpw / ms / 1e6)
                return "%.0f GFLOP/s" % (flops * n / ms / 1e6)
            lines.append("| %d | %s | %s | %s | %s | %s | %s | %s |" % (
                n, row["type"], bench.fmt_ms(bms),
                rate(bms, row["blockc_bytes_per_weight"]), g["type"],
                bench.fmt_ms(gms), rate(gms, g["bytes_per_weight"]),
                "%.2fx" % (gms / bms) if bms and gms else "–"))
    lines.append("")
    lines.append("GB/s: the weight bytes a token reads over its time (one "
                 "token); at 512 tokens GFLOP/s. ggml / blockc > 1: blockc "
                 "is faster.")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
