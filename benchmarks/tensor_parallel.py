#!/usr/bin/env python3
"""Tensor-parallel benchmark (docs/TensorParallel.md): the Llama-2-7B block
(f32) on the machine's two cores, one process with 2 OpenMP threads against
two MPI ranks with 1 thread each (mpirun -np 2 blockc-run
--tensor-parallel=2), in the same run.

  benchmarks/tensor_parallel.py [--rounds 3] [--repeat 5] [--quick] [--out DIR]

Cases: prefill T = 128 (time per pass, GFLOP/s) and decode (a prompt of
T = 128, then single-token steps through the KV cache: median time per
token). For each configuration the peak resident memory of every process
(/usr/bin/time, so each rank's own) is recorded: the weights come from one
safetensors file that the ranks read by offset (mmap), each its half.
Configurations are interleaved (A/B) over --rounds rounds and the medians
of all rounds reported. Results go to DIR/tensor_parallel.json and .md
(default benchmarks/results/tensor-parallel-<machine>/).
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
import run as bench  # noqa: E402  (machine info, output parsing)

MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--mca", "btl",
          "self,vader"]
TIME = ["/usr/bin/time", "-f", "rss-kib %M"]


def configurations(model, weights):
    single = [os.path.join(bench.BIN, "blockc-run"), model,
              "--weights=" + weights, "--threads=2"]
    tp = MPIRUN + ["-np", "2"] + TIME + [
        os.path.join(bench.BIN, "blockc-run"), model,
        "--weights=" + weights, "--tensor-parallel=2", "--threads=1"]
    return [("1 rank x 2 threads", TIME + single),
            ("2 ranks x 1 thread", tp)]


def measure(cmd, extra, decode):
    p = subprocess.run(cmd + extra, capture_output=True, text=True,
                       timeout=3600)
    r = bench.parse_blockc(p.stdout)
    if decode:
        m = re.search(r"decode\s+(\d+) steps of 1 token: median ([0-9.]+) "
                      r"(us|ms|s)", p.stdout)
        if m:
            r["median_ms"] = float(m.group(2)) * bench.UNIT[m.group(3)]
    r["rss_mib"] = [int(k) / 1024.0 for k in
                    re.findall(r"rss-kib (\d+)", p.stderr)]
    if p.returncode or "median_ms" not in r:
        r["error"] = (p.stdout + p.stderr)[-2000:]
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--quick", action="store_true",
                    help="the small example block instead of Llama-2-7B")
    ap.add_argument("--out")
    args = ap.parse_args()
    machine = bench.machine_info()
    tmp = tempfile.mkdtemp(prefix="blockc-tp-")
    cfg = os.path.join(bench.ROOT, "benchmarks", "configs",
                       "small.json" if args.quick else "7b.json")
    model = os.path.join(tmp, "block.mlir")
    weights = os.path.join(tmp, "w.safetensors")
    subprocess.run([os.path.join(bench.BIN, "blockc-import"),
                    "--hf-config=" + cfg, "-o", model], check=True)
    bench.log("generating the weights (%s)" % os.path.basename(cfg))
    subprocess.run([bench.PYTHON, os.path.join(bench.ROOT, "utils",
                                               "blockc_ref.py"),
                    "gen-weights", "--config", cfg, "--seed", "1", "-o",
                    weights], check=True)
    cases = [("prefill T = 128", ["--random-input", "--seq-len=128",
                                  "--repeat=%d" % args.repeat], False),
             ("decode after T = 128", ["--random-input", "--seq-len=128",
                                       "--decode=%d" % (4 * args.repeat)],
              True)]
    # The machine's FMA peak and triad bandwidth on 2 threads, before and
    # after the runs (the best of both).
    _, exes = bench.build_probes(tmp)
    probes = [bench.run_probes(exes, 2, args.quick)]
    results = {}
    for case, extra, decode in cases:
        for rnd in range(args.rounds):
            for name, cmd in configurations(model, weights):
                bench.log("%s, %s, round %d" % (case, name, rnd + 1))
                r = measure(cmd, extra, decode)
                results.setdefault(case, {}).setdefault(name, []).append(r)
    probes.append(bench.run_probes(exes, 2, args.quick))
    peak, triad = bench.limits(probes, 2)
    rows = []
    for case, by_name in results.items():
        for name, runs in by_name.items():
            ok = [r for r in runs if "median_ms" in r]
            row = {"case": case, "config": name, "runs": runs}
            if ok:
                row["median_ms"] = statistics.median(r["median_ms"]
                                                     for r in ok)
                row["rss_mib"] = [statistics.median(r["rss_mib"][i]
                                                    for r in ok)
                                  for i in range(min(len(r["rss_mib"])
                                                     for r in ok))]
                flops = [r.get("flops_reported") for r in ok
                         if r.get("flops_reported")]
                if flops and "prefill" in case:
                    row["gflops"] = flops[0] / row["median_ms"] * 1e-6
            rows.append(row)
    base = {r["case"]: r.get("median_ms") for r in rows
            if r["config"].startswith("1 rank")}
    lines = ["# Tensor parallelism: Llama-2-7B block, f32%s" % (
        " (quick: small block)" if args.quick else ""), "",
        "%s (%s, %s, %s CPUs), %s; %d rounds, configurations interleaved, "
        "medians. Measured in the same run: FMA peak %.1f GFLOP/s and triad "
        "%.1f GB/s on 2 threads." % (
            machine["model_name"], machine["cpu_family_model"],
            machine["isa"], machine["cpus"], machine["date_utc"],
            args.rounds, peak, triad), "",
        "| case | configuration | time (ms) | GFLOP/s (% of peak) "
        "| vs 1 rank x 2 threads | peak RSS per process |",
        "|---|---|---|---|---|---|"]
    for r in rows:
        t = r.get("median_ms")
        b = base.get(r["case"])
        lines.append("| %s | %s | %s | %s | %s | %s |" % (
            r["case"], r["config"],
            bench.fmt_ms(t) if t else "failed",
            "%.1f (%.0f%%)" % (r["gflops"], 100 * r["gflops"] / peak)
            if r.get("gflops") and peak else "–",
            "%.2fx" % (b / t) if t and b else "–",
            ", ".join("%.0f MiB" % m for m in r.get("rss_mib", []))))
    md = "\n".join(lines) + "\n"
    out = args.out or os.path.join(bench.ROOT, "benchmarks", "results",
                                   "tensor-parallel-" +
                                   bench.machine_slug(machine))
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "tensor_parallel.json"), "w") as f:
        json.dump({"machine": machine, "rounds": args.rounds,
                   "fma_peak_gflops": peak, "triad_gbs": triad,
                   "rows": rows}, f, indent=1)
    with open(os.path.join(out, "tensor_parallel.md"), "w") as f:
        f.write(md)
    print(md)


if __name__ == "__main__":
    main()
