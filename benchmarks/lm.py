#!/usr/bin/python3
"""Whole-model generation: blockc vs PyTorch eager on a Llama causal LM.

    /usr/bin/python3 benchmarks/lm.py [--config llama2-7b-lm] [--layers 32]
        [--dtypes bf16,int8,int4] [--prompt 128] [--new-tokens 16]
        [--threads 1,2] [--out DIR]

For every weight type and thread count, back to back on the same machine:
  * blockc   blockc-import --hf-config=CONFIG --model=causal-lm --layers=L
             --dtype=bf16 [--quantize=int8|int4], then blockc-run MODEL
             --random-weights --seq-len=PROMPT --generate=NEW --threads=n:
             one prefill of PROMPT random ids and NEW - 1 decode steps
             (blockc-run prints the prefill's and the steps' tokens/s);
  * PyTorch  benchmarks/peers.py torch-lm: the same model in eager bf16
             (PyTorch has no int8/int4 path here, so the bf16 model is the
             peer of every type), one prefill and greedy steps with a
             preallocated KV cache;
with each process's peak RSS, and the machine's triad bandwidth (probes/),
from which the bound per decoded token is the bytes of weights read per
token over the bandwidth. Models run one at a time (a 7B bf16 model is
13.5 GB; two at once would not fit in 24 GiB).

Writes DIR/latest.md and DIR/latest.json (DIR: benchmarks/results/
lm-<machine>). With --append, this run's rows are added to DIR/latest.json
(same config, layers, prompt and new tokens) instead of replacing it: a
full run can be split into parts that each fit a time slot (e.g. bf16 with
PyTorch, then int8,int4 --no-peer --append); the file lists every part's
date, commit and rows.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run as bench  # noqa: E402  (the shared helpers of benchmarks/run.py)


def rss_run(cmd, env=None, timeout=3600):
    """Runs cmd under GNU time; returns (returncode, stdout, stderr, peak
    RSS in GiB)."""
    tagged = ["/usr/bin/time", "-f", "lm.py-max-rss-kib %M"] + cmd
    try:
        p = subprocess.run(tagged, capture_output=True, text=True, env=env,
                           timeout=timeout)
    except subprocess.TimeoutExpired as e:
        return 124, str(e.stdout or ""), "timed out", 0.0
    m = re.search(r"lm.py-max-rss-kib (\d+)", p.stderr)
    rss = int(m.group(1)) / 2**20 if m else 0.0
    err = re.sub(r"lm.py-max-rss-kib \d+\n?", "", p.stderr)
    return p.returncode, p.stdout, err, rss


UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "\u00b5s": 1e-6, "ns": 1e-9}


def parse_generate(out):
    """The prefill and decode figures blockc-run --generate prints:
      prefill  128 tokens x 1 sequence in 9.1 s, 14.1 tokens/s
      decode   15 steps of 1 token: median 1.2 s, p90 1.3 s, 0.8 tokens/s
    """
    r = {}
    m = re.search(r"prefill\s+(\d+) tokens x (\d+) sequences? in "
                  r"([0-9.]+) (\S+), ([0-9.]+) tokens/s", out)
    if m:
        r["prefill_s"] = float(m.group(3)) * UNITS.get(m.group(4), 1.0)
        r["prefill_tokens_per_s"] = float(m.group(5))
    m = re.search(r"decode\s+(\d+) steps of 1 token: median ([0-9.]+) "
                  r"(\S+), p90 [^,]+, ([0-9.]+) tokens/s", out)
    if m:
        r["step_median_s"] = float(m.group(2)) * UNITS.get(m.group(3), 1.0)
        r["decode_tokens_per_s"] = float(m.group(4))
    m = re.search(r"prepare .*weights packed, ([0-9.]+) MiB", out)
    if m:
        r["prepared_bytes"] = float(m.group(1)) * 2**20
    m = re.search(r"compile\s+([0-9.]+) (\S+)", out)
    if m:
        r["compile_s"] = float(m.group(1)) * UNITS.get(m.group(2), 1.0)
    return r


def weight_bytes_per_token(c, layers, vocab, dtype):
    """Bytes of weights a decode step reads: every projection and the LM
    head (int8: 1 byte + a f32 scale per 32; int4: half a byte + a bf16
    scale per 32, the LM head quantised likewise), norms ignored."""
    params = layers * bench.proj_params(c) + vocab * c["d"]
    per = {"bf16": 2.0, "int8": 1.0 + 4.0 / 32, "int4": 0.5 + 2.0 / 32}
    return params * per[dtype]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--config", default="llama2-7b-lm")
    p.add_argument("--layers", type=int, default=32)
    p.add_argument("--dtypes", default="bf16,int8,int4")
    p.add_argument("--prompt", type=int, default=128)
    p.add_argument("--new-tokens", type=int, default=16)
    p.add_argument("--threads", default="1,2")
    p.add_argument("--no-peer", action="store_true")
    p.add_argument("--out", default="")
    p.add_argument("--append", action="store_true",
                   help="add the rows to DIR/latest.json of an earlier part")
    a = p.parse_args()

    c = bench.load_config(a.config)
    with open(c["path"]) as f:
        vocab = json.load(f)["vocab_size"]
    threads = [int(t) for t in a.threads.split(",")]
    machine = bench.machine_info()
    tmp = tempfile.mkdtemp(prefix="blockc-lm-")
    _, probes = bench.build_probes(tmp)
    probe_runs = [bench.run_probes(probes, max(threads), quick=True)]
    report = {"machine": machine, "blockc": bench.blockc_version(),
              "config": a.config, "layers": a.layers, "vocab": vocab,
              "prompt": a.prompt, "new_tokens": a.new_tokens, "rows": []}
    out_dir = a.out or os.path.join(
        HERE, "results", "lm-" + bench.machine_slug(machine))
    earlier = None
    if a.append:
        with open(os.path.join(out_dir, "latest.json")) as f:
            earlier = json.load(f)
        for key in ("config", "layers", "prompt", "new_tokens"):
            if earlier[key] != report[key]:
                raise RuntimeError("--append: %s is %s in the earlier part, "
                                   "%s here" % (key, earlier[key],
                                                report[key]))
    for dtype in a.dtypes.split(","):
        model = os.path.join(tmp, "lm-%s.mlir" % dtype)
        cmd = [os.path.join(bench.BIN, "blockc-import"),
               "--hf-config=" + c["path"], "--model=causal-lm",
               "--layers=%d" % a.layers, "--dtype=bf16", "-o", model]
        if dtype != "bf16":
            cmd.append("--quantize=" + dtype)
        imp = bench.run_tool(cmd)
        if imp.returncode:
            raise RuntimeError("import failed: %s" % imp.stderr)
        for n in threads:
            bench.log("blockc %s, %d thread(s)" % (dtype, n))
            rc, out, err, rss = rss_run(
                [os.path.join(bench.BIN, "blockc-run"), model,
                 "--random-weights", "--seq-len=%d" % a.prompt,
                 "--generate=%d" % a.new_tokens, "--threads=%d" % n,
                 "--quiet"])
            row = {"who": "blockc", "dtype": dtype, "threads": n,
                   "rc": rc, "max_rss_gib": rss,
                   "weight_bytes_per_token":
                       weight_bytes_per_token(c, a.layers, vocab, dtype)}
            row.update(parse_generate(out))
            # What a decode step streams: the prepared (packed, quantised)
            # weights when the entry prepares them.
            if row.get("prepared_bytes"):
                row["weight_bytes_per_token"] = row["prepared_bytes"]
            if rc:
                row["error"] = (err or out)[-2000:]
            row["output"] = out
            report["rows"].append(row)
    if not a.no_peer:
        for n in threads:
            bench.log("PyTorch eager bf16, %d thread(s)" % n)
            rc, out, err, rss = rss_run(
                [bench.PYTHON, os.path.join(HERE, "peers.py"), "torch-lm",
                 "--d", str(c["d"]), "--heads", str(c["heads"]),
                 "--kv-heads", str(c["kv_heads"]),
                 "--head-dim", str(c["head_dim"]), "--d-ff", str(c["d_ff"]),
                 "--seq-len", str(a.prompt), "--layers", str(a.layers),
                 "--vocab", str(vocab), "--new-tokens", str(a.new_tokens),
                 "--dtype", "bf16", "--threads", str(n)],
                env=bench.peer_env(n))
            row = {"who": "pytorch", "dtype": "bf16", "threads": n, "rc": rc,
                   "max_rss_gib": rss,
                   "weight_bytes_per_token":
                       weight_bytes_per_token(c, a.layers, vocab, "bf16")}
            if rc == 0:
                row.update(json.loads(out.strip().splitlines()[-1]))
            else:
                row["error"] = err[-2000:]
            report["rows"].append(row)
    probe_runs.append(bench.run_probes(probes, max(threads), quick=True))
    for row in report["rows"]:
        _, triad = bench.limits(probe_runs, row["threads"])
        row["triad_gbs"] = triad
        if triad and row.get("decode_tokens_per_s"):
            bound = triad * 1e9 / row["weight_bytes_per_token"]
            row["bound_tokens_per_s"] = bound
            row["of_bound"] = row["decode_tokens_per_s"] / bound
    # One entry per part of the run: when, which commit, which rows.
    part = {"date_utc": machine["date_utc"],
            "commit": report["blockc"]["commit"],
            "rows": ["%s %s" % (r["who"], r["dtype"]) for r in report["rows"]]}
    report["parts"] = [part]
    if earlier:
        report["parts"] = earlier.get("parts") or [{
            "date_utc": earlier["machine"]["date_utc"],
            "commit": earlier["blockc"]["commit"],
            "rows": ["%s %s" % (r["who"], r["dtype"])
                     for r in earlier["rows"]]}]
        report["parts"].append(part)
        report["rows"] = earlier["rows"] + report["rows"]
    bench.write_latest(out_dir, report, markdown(report))
    return 0


def markdown(report):
    m = report["machine"]
    lines = [
        "# Whole-model generation: %s, %d layers, vocab %d" % (
            report["config"], report["layers"], report["vocab"]),
        "",
        "%s (%s, %s), %s CPUs, %s; blockc %s; %s; prompt %d tokens, %d new "
        "tokens, random weights." % (
            m["model_name"], m["cpu_family_model"], m["isa"], m["cpus"],
            m["memory"], report["blockc"]["commit"], m["date_utc"],
            report["prompt"], report["new_tokens"]),
        ""]
    parts = report.get("parts") or []
    if len(parts) > 1:
        lines += [
            "Measured in %d parts, one after the other on the same machine "
            "(each with its own triad probes; the rows are as measured):" %
            len(parts), ""]
        for p in parts:
            rows = sorted(set(p["rows"]), key=p["rows"].index)
            lines.append("- %s, blockc %s: %s" % (
                p["date_utc"], p["commit"], ", ".join(rows)))
        lines.append("")
    lines += [
        "| who | weights | threads | prefill tokens/s | decode tokens/s | "
        "bound tokens/s (triad) | of bound | peak RSS GiB |",
        "|---|---|---|---|---|---|---|---|"]
    for r in report["rows"]:
        def f(key, spec="%.2f"):
            v = r.get(key)
            return spec % v if isinstance(v, (int, float)) else "–"
        lines.append("| %s | %s | %d | %s | %s | %s | %s | %s |" % (
            r["who"], r["dtype"], r["threads"], f("prefill_tokens_per_s"),
            f("decode_tokens_per_s"), f("bound_tokens_per_s"),
            f("of_bound", "%.0f%%") if "of_bound" not in r else
            "%.0f%%" % (100 * r["of_bound"]), f("max_rss_gib", "%.1f")))
        if r.get("error"):
            lines.append("")
            lines.append("  %s %s failed: %s" % (
                r["who"], r["dtype"], r["error"].strip().splitlines()[-1]))
    lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
