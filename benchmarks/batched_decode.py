#!/usr/bin/python3
"""Batched decoding: blockc's paged sessions vs PyTorch eager batched decode.

    /usr/bin/python3 benchmarks/batched_decode.py [--config 7b]
        [--dtype f32|bf16] [--batches 1,4,16,32] [--kv-len 512]
        [--steps 5] [--threads 2] [--page-size 16] [--out DIR]

One transformer block (benchmarks/configs/CONFIG.json), random weights. For
every batch size B, back to back on the same machine:
  * blockc   the Python package (build/python) over the session C API:
             max(B) sequences are prefilled once with KV_LEN random tokens
             each (blockc.Model(...).session(), s.step with prompt chunks);
             for each B, B of them are forked (a fork shares its parent's
             full pages, so each decoding sequence reads its own parent's
             KV_LEN cached tokens and writes a page of its own) and
             STEPS + 1 batched steps of one token per sequence run, the
             first untimed; the forks are freed afterwards;
  * PyTorch  benchmarks/peers.py torch-decode --batch B --kv-len KV_LEN:
             the eager block on x [B, 1, d] against a preallocated dense
             cache [B, KV_LEN + 1, H_kv, dh] per K and V (OpenBLAS's
             environment cleared, see peer_env).
Decode throughput is B / (median step time). The bound per step is the
bytes a step must read (the weights once, plus every sequence's cached K
and V) over the machine's triad bandwidth (probes/).

Writes DIR/latest.md and DIR/latest.json (DIR: benchmarks/results/
batched-decode-<machine>).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import run as bench  # noqa: E402  (the shared helpers of benchmarks/run.py)


def worker(a):
    """Runs in a child process with PYTHONPATH=build/python: the blockc
    side of one thread count, for every batch size; prints one JSON line."""
    import numpy as np

    import blockc

    batches = [int(b) for b in a.batches.split(",")]
    n_seq = max(batches)
    t0 = time.perf_counter()
    m = blockc.Model(a.model, weights=a.weights, target="cpu",
                     threads=a.threads)
    t1 = time.perf_counter()
    pages_per_seq = -(-(a.kv_len + a.steps + 1) // a.page_size)
    s = m.session(page_size=a.page_size,
                  num_pages=n_seq * pages_per_seq + n_seq + 8)
    t2 = time.perf_counter()
    rng = np.random.default_rng(0)
    d = a.d
    parents = [s.add() for _ in range(n_seq)]
    chunk = max(1, 2048 // a.kv_len)
    prefill_s = []
    for i in range(0, n_seq, chunk):
        group = parents[i:i + chunk]
        xs = {p: rng.standard_normal((a.kv_len, d)).astype(np.float32)
              for p in group}
        t = time.perf_counter()
        s.step(xs)
        prefill_s.append(time.perf_counter() - t)
    result = {"load_s": t1 - t0, "session_s": t2 - t1,
              "prefill_s": sum(prefill_s),
              "prefill_tokens": n_seq * a.kv_len, "rows": []}
    for B in batches:
        kids = [s.fork(p) for p in parents[:B]]
        times = []
        for step in range(a.steps + 1):
            xs = {k: rng.standard_normal((1, d)).astype(np.float32)
                  for k in kids}
            t = time.perf_counter()
            out = s.step(xs)
            if step:
                times.append(time.perf_counter() - t)
            assert all(out[k].shape == (1, d) for k in kids)
        for k in kids:
            s.free(k)
        med = statistics.median(times)
        result["rows"].append({"batch": B, "step_median_s": med,
                               "times_s": times,
                               "decode_tokens_per_s": B / med})
    print(json.dumps(result))
    return 0


def kv_bytes(c, kv_len, elem):
    return 2 * kv_len * c["kv_heads"] * c["head_dim"] * elem


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--config", default="7b")
    p.add_argument("--dtype", choices=("f32", "bf16"), default="f32")
    p.add_argument("--batches", default="1,4,16,32")
    p.add_argument("--kv-len", type=int, default=512)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--threads", default="2")
    p.add_argument("--page-size", type=int, default=16)
    p.add_argument("--no-peer", action="store_true")
    p.add_argument("--out", default="")
    # The child process (see worker()).
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--model", help=argparse.SUPPRESS)
    p.add_argument("--weights", help=argparse.SUPPRESS)
    p.add_argument("--d", type=int, help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.worker:
        a.threads = int(a.threads)
        return worker(a)

    sys.path.insert(0, os.path.join(ROOT, "utils"))
    import blockc_ref as ref

    c = bench.load_config(a.config)
    threads = [int(t) for t in a.threads.split(",")]
    batches = [int(b) for b in a.batches.split(",")]
    machine = bench.machine_info()
    tmp = tempfile.mkdtemp(prefix="blockc-batched-")
    _, probes = bench.build_probes(tmp)
    probe_runs = [bench.run_probes(probes, max(threads), quick=True)]

    model = os.path.join(tmp, "block.mlir")
    cmd = [os.path.join(bench.BIN, "blockc-import"),
           "--hf-config=" + c["path"], "-o", model]
    if a.dtype != "f32":
        cmd.append("--dtype=" + a.dtype)
    imp = bench.run_tool(cmd)
    if imp.returncode:
        raise RuntimeError("import failed: %s" % imp.stderr)
    weights = os.path.join(tmp, "w.safetensors")
    cfg = ref.load_config(c["path"])
    st = "BF16" if a.dtype == "bf16" else "F32"
    ref.write_safetensors(weights, [
        (k, st, v.shape, ref.encode_tensor(v, st))
        for k, v in ref.gen_weights(cfg, 0).items()])

    report = {"machine": machine, "blockc": bench.blockc_version(),
              "config": a.config, "dtype": a.dtype, "kv_len": a.kv_len,
              "steps": a.steps, "page_size": a.page_size, "rows": []}
    elem = 4 if a.dtype == "f32" else 2
    wbytes = bench.proj_params(c) * elem
    for n in threads:
        bench.log("blockc %s, %d thread(s)" % (a.dtype, n))
        env = dict(os.environ)
        env["PYTHONPATH"] = os.path.join(ROOT, "build", "python")
        p = subprocess.run(
            [bench.PYTHON, os.path.abspath(__file__), "--worker",
             "--model", model, "--weights", weights, "--d", str(c["d"]),
             "--batches", a.batches, "--kv-len", str(a.kv_len),
             "--steps", str(a.steps), "--threads", str(n),
             "--page-size", str(a.page_size)],
            capture_output=True, text=True, env=env, timeout=3600)
        if p.returncode:
            report["rows"].append({"who": "blockc", "threads": n,
                                   "error": (p.stderr or p.stdout)[-2000:]})
        else:
            r = json.loads(p.stdout.strip().splitlines()[-1])
            report.setdefault("blockc_prefill", {})[n] = {
                k: r[k] for k in ("load_s", "session_s", "prefill_s",
                                  "prefill_tokens")}
            for row in r["rows"]:
                row.update(who="blockc", threads=n)
                report["rows"].append(row)
        if a.no_peer:
            continue
        for B in batches:
            bench.log("PyTorch eager %s, batch %d, %d thread(s)" % (
                a.dtype, B, n))
            p = subprocess.run(
                [bench.PYTHON, os.path.join(HERE, "peers.py"), "torch-decode",
                 "--d", str(c["d"]), "--heads", str(c["heads"]),
                 "--kv-heads", str(c["kv_heads"]),
                 "--head-dim", str(c["head_dim"]), "--d-ff", str(c["d_ff"]),
                 "--seq-len", "1", "--kv-len", str(a.kv_len),
                 "--batch", str(B), "--dtype", a.dtype,
                 "--repeat", str(a.steps), "--threads", str(n)],
                capture_output=True, text=True, env=bench.peer_env(n),
                timeout=3600)
            row = {"who": "pytorch", "threads": n, "batch": B}
            if p.returncode:
                row["error"] = p.stderr[-2000:]
            else:
                r = json.loads(p.stdout.strip().splitlines()[-1])
                row.update(step_median_s=r["median_ms"] / 1e3,
                           times_s=[t / 1e3 for t in r["times_ms"]],
                           decode_tokens_per_s=B * 1e3 / r["median_ms"],
                           torch_version=r.get("torch_version"),
                           openblas=r.get("openblas"),
                           blas_libraries=r.get("blas_libraries"))
            report["rows"].append(row)
    probe_runs.append(bench.run_probes(probes, max(threads), quick=True))
    for row in report["rows"]:
        _, triad = bench.limits(probe_runs, row["threads"])
        row["triad_gbs"] = triad
        if "batch" in row:
            row["bytes_per_step"] = wbytes + row["batch"] * kv_bytes(
                c, a.kv_len, elem)
        if triad and row.get("decode_tokens_per_s"):
            bound = row["batch"] * triad * 1e9 / row["bytes_per_step"]
            row["bound_tokens_per_s"] = bound
            row["of_bound"] = row["decode_tokens_per_s"] / bound
    out_dir = a.out or os.path.join(
        HERE, "results", "batched-decode-" + bench.machine_slug(machine))
    bench.write_latest(out_dir, report, markdown(report))
    return 0


def markdown(report):
    m = report["machine"]
    lines = [
        "# Batched decoding: the %s block (%s), %d cached tokens per "
        "sequence" % (report["config"], report["dtype"], report["kv_len"]),
        "",
        "%s (%s, %s), %s CPUs, %s; blockc %s; %s; page size %d; median of "
        "%d steps; random weights." % (
            m["model_name"], m["cpu_family_model"], m["isa"], m["cpus"],
            m["memory"], report["blockc"]["commit"], m["date_utc"],
            report["page_size"], report["steps"]),
        "",
        "| who | threads | batch | step ms | decode tokens/s | "
        "bound tokens/s (triad) | of bound | blockc / PyTorch |",
        "|---|---|---|---|---|---|---|---|"]
    torch = {(r["threads"], r.get("batch")): r.get("decode_tokens_per_s")
             for r in report["rows"] if r["who"] == "pytorch"}
    for r in report["rows"]:
        if r.get("error"):
            lines.append("| %s | %d | %s | failed: %s | | | | |" % (
                r["who"], r["threads"], r.get("batch", "–"),
                r["error"].strip().splitlines()[-1][:120]))
            continue
        ratio = "–"
        peer = torch.get((r["threads"], r["batch"]))
        if r["who"] == "blockc" and peer:
            ratio = "%.2fx" % (r["decode_tokens_per_s"] / peer)
        lines.append("| %s | %d | %d | %.1f | %.1f | %s | %s | %s |" % (
            r["who"], r["threads"], r["batch"], 1e3 * r["step_median_s"],
            r["decode_tokens_per_s"],
            "%.1f" % r["bound_tokens_per_s"]
            if r.get("bound_tokens_per_s") else "–",
            "%.0f%%" % (100 * r["of_bound"]) if r.get("of_bound") else "–",
            ratio))
    for n, pf in sorted(report.get("blockc_prefill", {}).items()):
        lines += ["", "blockc, %s thread(s): model load %.1f s, session "
                  "(compiling the paged entry) %.1f s; prefill of the "
                  "sequences' caches, %d tokens in chunks of 2048, %.1f s "
                  "(%.0f tokens/s)." % (
                      n, pf["load_s"], pf.get("session_s", 0.0),
                      pf["prefill_tokens"], pf["prefill_s"],
                      pf["prefill_tokens"] / max(pf["prefill_s"], 1e-9))]
    lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
