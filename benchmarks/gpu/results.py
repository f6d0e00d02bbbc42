#!/usr/bin/env python3
"""Writes the GPU benchmark bundle's results as latest.json and latest.md.

  results.py --bundle DIR --out OUT [--date "YYYY-MM-DD HH:MM UTC"]

run.sh (benchmarks/gpu/README.md) calls it last, on the GPU machine. It
reads what the run left in OUT/logs: gpu.csv (nvidia-smi's name, driver,
compute capability, max SM clock, memory), steps.tsv (one line per step:
name, exit status or skipped:budget / skipped:hung, seconds, time limit)
and each step's NAME.log, which holds the lines block_gpu.c and
torch_block.py print:

  check-*-ref           torch_block.py check: a checked block's error
                        (CHECKS: the small block under each schedule, the
                        head-dim-128 block)
  blockc-DTYPE-TN       block_gpu time: "blockc B=.. T=N: median .. ms .."
  blockc-decode-DTYPE-LN  block_gpu decode: "blockc decode B=.. L=N: median
                        .. us (min .., max ..) over .. steps, .. GB/s (..
                        MB per step: weights .., KV ..); prefill .. ms"
  torch-DTYPE-block     torch_block.py block: "torch block T=N: .. ms, .."
  torch-DTYPE-peak      torch_block.py peak, gemm, decode
  torch-DTYPE-gemm, torch-DTYPE-decode
  profile-DTYPE-TN      block_gpu time with a profile: "... per-kernel GPU
                        times of C calls -> FILE"; FILE is merged with the
                        bundle's bound table bound-DTYPE-TN.txt (the
                        emulator's, when gpu-bench.sh made one) by
                        profile_merge.py

and DIR/bundle.json (what gpu-bench.sh built: blockc's commit, the arch).
A missing or failed step is listed under "problems"; everything that was
measured is still written. Prints where to commit the two files:
benchmarks/results/gpu-CHIP/, CHIP from the GPU's name (h200, h100, a100,
rtx4090, ...). Standard library only.
"""

import argparse
import datetime
import json
import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the bundle or the tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import profile_merge  # noqa: E402

BLOCKC = re.compile(r"^blockc B=(\d+) T=(\d+): median ([\d.]+) ms "
                    r"\(min ([\d.]+), max ([\d.]+)\) over (\d+) calls$")
PROFILED = re.compile(r"^blockc B=(\d+) T=(\d+): per-kernel GPU times of "
                      r"(\d+) calls -> (.+)$")
BLOCKC_DECODE = re.compile(
    r"^blockc decode B=(\d+) L=(\d+): median ([\d.]+) us \(min ([\d.]+), "
    r"max ([\d.]+)\) over (\d+) steps, ([\d.]+) GB/s \(([\d.]+) MB per "
    r"step: weights ([\d.]+), KV ([\d.]+)\); prefill ([\d.]+) ms$")
TORCH_BLOCK = re.compile(r"^torch block T=(\d+): ([\d.]+) ms, "
                         r"([\d.]+) TFLOP/s$")
TORCH_PEAK = re.compile(r"^torch peak (\w+) GEMM (\d+)\^3: ([\d.]+) ms, "
                        r"([\d.]+) TFLOP/s$")
TORCH_GEMM = re.compile(r"^torch gemm T=(\d+) (.+): ([\d.]+) ms, "
                        r"([\d.]+) TFLOP/s$")
TORCH_DECODE = re.compile(r"^torch decode L=(\d+): ([\d.]+) ms$")
SMALL = ("the small example block in bf16 (GQA 8/2, head dim 32, d 256), "
         "B = 2, T = 130, against the float64 reference with bf16 rounding "
         "points")
CHECKS = [
    ("check-small-ref", SMALL),
    ("check-small-cooperative-ref",
     SMALL + ", projections on the cooperative warpgroup schedule"),
    ("check-small-persistent-ref",
     SMALL + ", projections on the persistent warpgroup schedule"),
    ("check-hd128-ref",
     "a bf16 block with head dim 128 (GQA 4/2, d 512, d_ff 1024; sm_90a: "
     "the warpgroup attention), B = 2, T = 300, against the float64 "
     "reference with bf16 rounding points (tolerances 4u and u/4: "
     "torch_block.py check)"),
]
CHECK = re.compile(r"^check max_abs_err=(\S+) rms_err=(\S+) scale=(\S+) "
                   r"tol=(\S+) rms_tol=(\S+) non_finite=(\d+) (PASS|FAIL)$")
STEP_CASE = re.compile(r"^(blockc|profile)-(\w+)-T(\d+)$")
STEP_DECODE = re.compile(r"^blockc-decode-(\w+)-L(\d+)$")
# The first line of blockc-run --profile: "blockc profile: N kernels on CHIP
# (ARCH), bound = ...".
BOUND_CHIP = re.compile(r"^blockc profile: \d+ kernels on (\S+) \((\S+)\)")

DTYPE_NAMES = {"bf16": "bf16", "tf32": "f32 on TF32 tensor cores",
               "bf16persistent": "bf16, persistent warpgroup schedule",
               "bf16cooperative": "bf16, cooperative warpgroup schedule",
               "bf16bshd": "bf16, KV caches [B, L_max, H_kv, D] "
                           "(--kv-layout=bshd)",
               "bf16unmerged": "bf16, each kernel its own launch "
                               "(-gpu-merge-launches=false)",
               "bf16normkernels": "bf16, the norms as kernels of their own "
                                  "(-gpu-gemv-norm-prologue=false)"}
# The architectures a bundle may be built for and the compute capabilities
# whose GPUs run them (an arch-specific sm_XYa only on X.Y exactly).
ARCH_RUNS_ON = {"sm_90a": ("9.0",), "sm_100a": ("10.0",)}


def chip_name(gpu_name):
    """A short lower-case chip name from nvidia-smi's: "NVIDIA H200" -> h200,
    "NVIDIA H100 80GB HBM3" -> h100, "NVIDIA A100-SXM4-80GB" -> a100,
    "NVIDIA GeForce RTX 4090" -> rtx4090."""
    words = [w for w in re.split(r"[\s_-]+", gpu_name)
             if w and w.lower() not in ("nvidia", "geforce", "tesla")]
    if not words:
        return "unknown"
    chip = words[0]
    if chip.lower() in ("rtx", "gtx", "titan", "quadro") and len(words) > 1:
        chip += words[1]
    chip = re.sub(r"[^a-z0-9]", "", chip.lower())
    return chip or "unknown"


def read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return None


def log_lines(logs, name):
    text = read(os.path.join(logs, name + ".log"))
    return [] if text is None else [l.strip() for l in text.splitlines()]


def read_steps(logs):
    steps = []
    text = read(os.path.join(logs, "steps.tsv")) or ""
    for line in text.splitlines():
        fields = line.split("\t")
        if len(fields) != 4:
            continue
        name, rc, seconds, limit = fields
        if rc == "skipped:budget":
            status = "skipped (the run's time budget was spent)"
        elif rc == "skipped:hung":
            status = "skipped (the same binary timed out before)"
        elif rc == "0":
            status = "ok"
        elif rc in ("124", "137"):
            status = "timed out after %s s" % limit
        else:
            status = "exit %s" % rc
        steps.append({"name": name, "status": status,
                      "seconds": int(seconds) if seconds.isdigit() else None})
    return steps


def read_gpu(logs):
    text = read(os.path.join(logs, "gpu.csv"))
    if not text or not text.strip():
        return None
    fields = [f.strip() for f in text.strip().splitlines()[0].split(",")]
    keys = ("name", "driver", "compute_cap", "max_sm_clock", "memory")
    return dict(zip(keys, fields))


def ratio(a, b):
    return round(a / b, 3) if a is not None and b else None


def collect(bundle, out, date):
    logs = os.path.join(out, "logs")
    problems = []
    info = {}
    text = read(os.path.join(bundle, "bundle.json"))
    if text is not None:
        try:
            info = json.loads(text)
        except ValueError as e:
            problems.append("bundle.json is not JSON: %s" % e)
    else:
        problems.append("the bundle has no bundle.json")

    gpu = read_gpu(logs)
    if gpu is None:
        problems.append("no GPU description (nvidia-smi failed)")
        gpu = {}
    chip = chip_name(gpu.get("name", ""))
    arch = info.get("arch")
    runs_on = ARCH_RUNS_ON.get(arch)
    cap = gpu.get("compute_cap")
    if runs_on and cap and cap not in runs_on:
        problems.append("the bundle's kernels are for %s, which runs on "
                        "compute capability %s only; this GPU has %s"
                        % (arch, " or ".join(runs_on), cap))

    steps = read_steps(logs)
    for s in steps:
        if s["status"] != "ok":
            problems.append("step %s: %s" % (s["name"], s["status"]))
    step_names = [s["name"] for s in steps]

    # Each check's step (run.sh) and what it compares; a check whose step
    # the run did not have (an sm_80 bundle has no warpgroup schedules) is
    # not expected.
    correctness = []
    for name, what in CHECKS:
        for line in log_lines(logs, name):
            m = CHECK.match(line)
            if m:
                err, rms, scale, tol, rms_tol = (float(g)
                                                 for g in m.groups()[:5])
                correctness.append({
                    "step": name, "case": what, "max_abs_err": err,
                    "rms_err": rms, "scale": scale, "tol": tol,
                    "rms_tol": rms_tol, "non_finite": int(m.group(6)),
                    "pass": m.group(7) == "PASS"})
        if name in step_names and not any(c["step"] == name
                                          for c in correctness):
            problems.append("no correctness result (%s)" % name)
    if not correctness:
        problems.append("no correctness result (check-small, "
                        "check-small-ref)")

    cases = {}

    def case(dtype, t):
        return cases.setdefault((dtype, t), {
            "case": "Llama-2-7B block, %s, T = %d"
                    % (DTYPE_NAMES.get(dtype, dtype), t),
            "dtype": dtype, "T": t, "blockc_ms": None, "blockc_min_ms": None,
            "blockc_max_ms": None, "blockc_calls": None, "torch_ms": None})

    decode_cases = {}

    def decode_case(dtype, length):
        return decode_cases.setdefault((dtype, length), {
            "case": "Llama-2-7B decode step, %s, L = %d"
                    % (DTYPE_NAMES.get(dtype, dtype), length),
            "dtype": dtype, "L": length, "blockc_us": None,
            "blockc_min_us": None, "blockc_max_us": None,
            "blockc_steps": None, "blockc_gb_s": None, "mb_per_step": None,
            "weight_mb": None, "kv_mb": None, "prefill_ms": None,
            "torch_ms": None})

    peaks, gemms, decodes, kernels = {}, [], [], []
    for name in step_names:
        lines = log_lines(logs, name)
        d = STEP_DECODE.match(name)
        if d:
            c = decode_case(d.group(1), int(d.group(2)))
            for line in lines:
                g = BLOCKC_DECODE.match(line)
                if g:
                    c.update(blockc_us=float(g.group(3)),
                             blockc_min_us=float(g.group(4)),
                             blockc_max_us=float(g.group(5)),
                             blockc_steps=int(g.group(6)),
                             blockc_gb_s=float(g.group(7)),
                             mb_per_step=float(g.group(8)),
                             weight_mb=float(g.group(9)),
                             kv_mb=float(g.group(10)),
                             prefill_ms=float(g.group(11)))
            continue
        m = STEP_CASE.match(name)
        if m and m.group(1) == "blockc":
            for line in lines:
                b = BLOCKC.match(line)
                if b:
                    c = case(m.group(2), int(b.group(2)))
                    c.update(blockc_ms=float(b.group(3)),
                             blockc_min_ms=float(b.group(4)),
                             blockc_max_ms=float(b.group(5)),
                             blockc_calls=int(b.group(6)))
        elif m and m.group(1) == "profile":
            dtype, t = m.group(2), int(m.group(3))
            for line in lines:
                p = PROFILED.match(line)
                if p:
                    kernels.append(merged_profile(bundle, out, dtype, t,
                                                  int(p.group(3)),
                                                  p.group(4), problems))
        parts = name.split("-")
        if len(parts) != 3 or parts[0] != "torch":
            continue
        dtype, what = parts[1], parts[2]
        for line in lines:
            if what == "block" and TORCH_BLOCK.match(line):
                g = TORCH_BLOCK.match(line)
                case(dtype, int(g.group(1)))["torch_ms"] = float(g.group(2))
            elif what == "peak" and TORCH_PEAK.match(line):
                g = TORCH_PEAK.match(line)
                peaks[g.group(1)] = float(g.group(4))
            elif what == "gemm" and TORCH_GEMM.match(line):
                g = TORCH_GEMM.match(line)
                gemms.append({"dtype": dtype, "T": int(g.group(1)),
                              "gemm": g.group(2), "ms": float(g.group(3)),
                              "tflops": float(g.group(4))})
            elif what == "decode" and TORCH_DECODE.match(line):
                g = TORCH_DECODE.match(line)
                decodes.append({"dtype": dtype, "L": int(g.group(1)),
                                "ms": float(g.group(2))})

    for k in kernels:
        if k["bound_chip"] and gpu and k["bound_chip"] != chip:
            problems.append("the bounds of %s assume %s, the GPU is %s "
                            "(build the bundle with BLOCKC_GPU_CHIP=%s)"
                            % (k["case"], k["bound_chip"], chip, chip))

    order = {"bf16": 0, "tf32": 1}
    case_list = []
    for key in sorted(cases, key=lambda k: (order.get(k[0], 2), k[0], k[1])):
        c = cases[key]
        c["torch_over_blockc"] = ratio(c["torch_ms"], c["blockc_ms"])
        for who, key in (("blockc", "blockc_ms"), ("PyTorch", "torch_ms")):
            if c[key] is None:
                problems.append("%s: no %s time" % (c["case"], who))
        case_list.append(c)
    if not case_list:
        problems.append("no block timings")
    # Decode steps: blockc beside PyTorch's step with the same cache length
    # (bf16's for bf16, bf16bshd, bf16unmerged and bf16normkernels).
    decode_list = []
    for key in sorted(decode_cases):
        c = decode_cases[key]
        for peer in decodes:
            if key[0].startswith(peer["dtype"]) and peer["L"] == key[1]:
                c["torch_ms"] = peer["ms"]
        blockc_ms = c["blockc_us"] / 1e3 if c["blockc_us"] is not None \
            else None
        c["torch_over_blockc"] = ratio(c["torch_ms"], blockc_ms)
        for who, k in (("blockc", "blockc_us"), ("PyTorch", "torch_ms")):
            if c[k] is None:
                problems.append("%s: no %s time" % (c["case"], who))
        decode_list.append(c)

    return {
        "date": date,
        "gpu": gpu,
        "chip": chip,
        "destination": "benchmarks/results/gpu-%s/" % chip,
        "bundle": info,
        "correctness": correctness,
        "cases": case_list,
        "decode": decode_list,
        "torch_peak_tflops": peaks,
        "torch_gemm": gemms,
        "torch_decode": decodes,
        "kernels": kernels,
        "steps": steps,
        "problems": problems,
    }


def merged_profile(bundle, out, dtype, t, calls, path, problems):
    """The per-kernel table of one profiled case (measured times merged
    with the bundle's bound table when it has one)."""
    entry = {"case": "%s, T = %d" % (DTYPE_NAMES.get(dtype, dtype), t),
             "dtype": dtype, "T": t, "bound_table": None}
    measured = path if os.path.isabs(path) else os.path.join(bundle, path)
    if not os.path.exists(measured):
        measured = os.path.join(out, os.path.basename(path))
    bound = os.path.join(bundle, "bound-%s-T%d.txt" % (dtype, t))
    entry["bound_chip"] = None
    if os.path.exists(bound):
        entry["bound_table"] = os.path.basename(bound)
        for line in (read(bound) or "").splitlines():
            m = BOUND_CHIP.match(line)
            if m:
                entry["bound_chip"] = m.group(1)
                break
    else:
        bound = None
    try:
        entry.update(profile_merge.merge_files(bound, measured, calls))
    except (profile_merge.MergeError, OSError) as e:
        problems.append("per-kernel table %s: %s" % (entry["case"], e))
        entry["error"] = str(e)
    return entry


def fmt(v, spec="%.3f", none="-"):
    return none if v is None else spec % v


def markdown(r):
    gpu = r["gpu"]
    b = r["bundle"]
    out = ["# GPU benchmark: %s" % gpu.get("name", "unknown GPU"), ""]
    out.append("%s; driver %s, compute capability %s, max SM clock %s, "
               "memory %s. blockc %s%s, kernels for %s (bundle built %s)."
               % (r["date"], gpu.get("driver", "?"),
                  gpu.get("compute_cap", "?"), gpu.get("max_sm_clock", "?"),
                  gpu.get("memory", "?"), b.get("blockc_commit", "?"),
                  " (uncommitted changes)" if b.get("blockc_dirty") else "",
                  b.get("arch", "?") + (" / " + b["chip"] if b.get("chip")
                                        else ""),
                  b.get("built", "?")))
    out.append("Measured by the bundle of scripts/gpu-bench.sh "
               "(benchmarks/gpu/README.md), all in one run.")
    out += ["", "## Correctness", ""]
    for c in r["correctness"]:
        out.append("- %s: max abs error %.4g at scale %.4g (tolerance %.4g), "
                   "RMS %.4g (tolerance %.4g), %d non-finite: **%s**."
                   % (c["case"][0].upper() + c["case"][1:], c["max_abs_err"],
                      c["scale"], c["tol"], c["rms_err"], c["rms_tol"],
                      c["non_finite"], "PASS" if c["pass"] else "FAIL"))
    if not r["correctness"]:
        out.append("Not measured (see Problems).")
    out += ["", "## Block times", "",
            "Medians; B = 1; blockc and PyTorch eager measured in this run.",
            "", "| case | blockc ms | PyTorch ms | PyTorch / blockc |",
            "|---|---|---|---|"]
    for k in r["cases"]:
        out.append("| %s | %s | %s | %s |" % (
            k["case"], fmt(k["blockc_ms"]), fmt(k["torch_ms"]),
            fmt(k["torch_over_blockc"], "%.2fx")))
    if r.get("decode"):
        out += ["", "## Decode steps", "",
                "One token per step at KV cache length L, B = 1, after a "
                "prefill of L tokens; medians. GB/s: the bytes a step must "
                "read (every weight once and the L + 1 cached K and V rows) "
                "over its time.", "",
                "| case | blockc us | GB/s | MB per step | prefill ms | "
                "PyTorch ms | PyTorch / blockc |",
                "|---|---|---|---|---|---|---|"]
        for k in r["decode"]:
            out.append("| %s | %s | %s | %s | %s | %s | %s |" % (
                k["case"], fmt(k["blockc_us"], "%.1f"),
                fmt(k["blockc_gb_s"], "%.1f"), fmt(k["mb_per_step"], "%.1f"),
                fmt(k["prefill_ms"]), fmt(k["torch_ms"]),
                fmt(k["torch_over_blockc"], "%.2fx")))
    if r["torch_peak_tflops"]:
        out += ["", "PyTorch GEMM 8192^3 (the measured peak): " + ", ".join(
            "%s %.1f TFLOP/s" % kv
            for kv in sorted(r["torch_peak_tflops"].items())) + "."]
    if r["torch_gemm"]:
        out += ["", "| PyTorch GEMM | T | ms | TFLOP/s |", "|---|---|---|---|"]
        for g in r["torch_gemm"]:
            out.append("| %s %s | %d | %.4f | %.1f |"
                       % (g["dtype"], g["gemm"], g["T"], g["ms"], g["tflops"]))
    for d in r["torch_decode"]:
        out += ["", "PyTorch %s decode step, KV cache %d: %.3f ms."
                % (d["dtype"], d["L"], d["ms"])]
    for k in r["kernels"]:
        out += ["", "## Per-kernel times, %s" % k["case"], ""]
        if "error" in k:
            out.append("Not merged: %s" % k["error"])
            continue
        out.append("Bound: %s." % (
            "the emulator's model of %s (%s)"
            % (k["bound_chip"] or "the arch's default chip", k["bound_table"])
            if k["bound_table"] else "none (no bound table in the bundle%s)"
            % (": " + b["bound_note"] if b.get("bound_note") else "")))
        out += ["", profile_merge.markdown(k).rstrip("\n")]
    out += ["", "## Steps", "", "| step | status | seconds |", "|---|---|---|"]
    for s in r["steps"]:
        out.append("| %s | %s | %s |" % (s["name"], s["status"],
                                         fmt(s["seconds"], "%d")))
    out += ["", "## Problems", ""]
    out += ["* %s" % p for p in r["problems"]] or ["None."]
    return "\n".join(out) + "\n"


def main(argv):
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bundle", required=True, help="the bundle's directory")
    p.add_argument("--out", required=True, help="run.sh's OUT directory")
    p.add_argument("--date", default=None,
                   help="the run's date (default: now, UTC)")
    args = p.parse_args(argv[1:])
    date = args.date or datetime.datetime.now(
        datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    r = collect(args.bundle, args.out, date)
    with open(os.path.join(args.out, "latest.json"), "w",
              encoding="utf-8") as f:
        json.dump(r, f, indent=1)
        f.write("\n")
    with open(os.path.join(args.out, "latest.md"), "w",
              encoding="utf-8") as f:
        f.write(markdown(r))
    out = os.path.abspath(args.out)
    print("results: %s and %s" % (os.path.join(out, "latest.json"),
                                  os.path.join(out, "latest.md")))
    print("commit them as %slatest.json and %slatest.md"
          % (r["destination"], r["destination"]))
    for problem in r["problems"]:
        print("problem: %s" % problem)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
