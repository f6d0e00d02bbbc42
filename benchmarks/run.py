#!/usr/bin/python3
"""blockc benchmark: blockc vs PyTorch eager vs the OpenBLAS GEMM sum, in one run.

    /usr/bin/python3 benchmarks/run.py [--quick] [--threads 1,2] [--repeat N]
                                       [--out DIR] [--no-readme]

For every case (config x sequence length) and thread count it measures, back to
back on the same machine:
  * blockc      build/bin/blockc-run <model.mlir> --random-weights
                --random-input --seq-len=T --repeat=N+1 --threads=n
                (the first timed run doubles as warm-up; blockc-run reports
                the median and min of all of them);
  * PyTorch     benchmarks/peers.py torch: eager forward of the same block
                (torch.set_num_threads(n), OPENBLAS_NUM_THREADS=n);
  * sgemm-sum   benchmarks/peers.py blas: numpy float32 matmuls of every
                projection, [T, d] @ [d, out] (OpenBLAS; sgemv when T = 1);
and, before and after the cases, the machine's own limits: an f32 FMA
throughput probe (probes/fma.c) and a STREAM-like triad (probes/triad.c),
compiled here with clang -O3 -march=native.

Writes DIR/latest.md, DIR/latest.json and DIR/latest.png (DIR defaults to
benchmarks/results, or benchmarks/results/quick with --quick) and, for a full
run into the default DIR, refreshes the results section of
benchmarks/README.md.  See benchmarks/README.md for what every column means.
"""

import argparse
import atexit
import datetime
import json
import math
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BIN = os.path.join(ROOT, "build", "bin")
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") \
    else sys.executable
OPENBLAS_DIR = "/usr/lib/x86_64-linux-gnu/openblas-pthread"

# (case name, config file in benchmarks/configs, sequence length T, KV
# cache length L: 0 = no cache, else one decode step against L cached tokens)
CASES = [
    ("small", "small", 128, 0),
    ("mid", "mid", 128, 0),
    ("7b", "7b", 128, 0),
    ("long", "mid", 2048, 0),
    ("7b-decode", "7b", 1, 0),
    ("7b-kv512", "7b", 1, 512),
    ("7b-kv4096", "7b", 1, 4096),
]
QUICK_CASES = ["small", "7b-decode"]

README_BEGIN = "<!-- BEGIN RESULTS (written by benchmarks/run.py) -->"
README_END = "<!-- END RESULTS -->"


def log(msg):
    print(msg, flush=True)


# --- helpers ---------------------------------------------------------------

def wait_for(path, timeout=300):
    """Tools vanish for a moment while another build relinks them."""
    deadline = time.time() + timeout
    while not os.access(path, os.X_OK):
        if time.time() > deadline:
            raise RuntimeError("%s is missing (waited %d s)" % (path, timeout))
        time.sleep(2)


def run_tool(cmd, env=None, timeout=1800, retries=3):
    """Run a build/bin tool; retry when it vanished or was replaced mid-run."""
    for attempt in range(retries + 1):
        wait_for(cmd[0])
        try:
            p = subprocess.run(cmd, env=env, capture_output=True, text=True,
                               timeout=timeout)
        except FileNotFoundError:
            p = None
        except subprocess.TimeoutExpired as e:
            return subprocess.CompletedProcess(
                cmd, 124, (e.stdout or b"").decode(errors="replace")
                if isinstance(e.stdout, bytes) else (e.stdout or ""),
                "timed out after %d s" % timeout)
        relinked = p is None or p.returncode in (126, 127) or (
            p.returncode < 0 and not os.access(cmd[0], os.X_OK)) or (
            "No such file or directory" in p.stderr and cmd[0] in p.stderr)
        if not relinked or attempt == retries:
            if p is None:
                return subprocess.CompletedProcess(cmd, 127, "",
                                                   "not found: " + cmd[0])
            return p
        log("    (%s not runnable, retrying in 5 s)" % os.path.basename(cmd[0]))
        time.sleep(5)


def sh(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True,
                              timeout=60).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def machine_info():
    lscpu = sh(["lscpu"])
    fields = {}
    for line in lscpu.splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            fields.setdefault(k.strip(), v.strip())
    mem = ""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    mem = "%.1f GiB" % (int(line.split()[1]) / 2**20)
    except OSError:
        pass
    flags = fields.get("Flags", "").split()
    isa = "AVX-512" if "avx512f" in flags else (
        "AVX2" if "avx2" in flags else "no AVX2")
    return {
        "model_name": fields.get("Model name", platform.processor()),
        "cpus": fields.get("CPU(s)", str(os.cpu_count())),
        "threads_per_core": fields.get("Thread(s) per core", "?"),
        "cores_per_socket": fields.get("Core(s) per socket", "?"),
        "sockets": fields.get("Socket(s)", "?"),
        "cpu_family_model": "family %s model %s" % (
            fields.get("CPU family", "?"),
                                       fields.get("Model", "?")),
        "hypervisor": fields.get("Hypervisor vendor", "none"),
        "l2": fields.get("L2 cache", "?"),
        "l3": fields.get("L3 cache", "?"),
        "isa": isa,
        "memory": mem,
        "kernel": platform.release(),
        "hostname": platform.node(),
        "date_utc": datetime.datetime.now(datetime.timezone.utc)
        .strftime("%Y-%m-%d %H:%M UTC"),
        "loadavg_start": list(os.getloadavg()),
    }


def blockc_version():
    head = sh(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"])
    subject = sh(["git", "-C", ROOT, "log", "-1", "--format=%s"])
    dirty = sh(["git", "-C", ROOT, "status", "--porcelain", "--",
                ".", ":!benchmarks"])
    run_bin = os.path.join(BIN, "blockc-run")
    mtime = None
    if os.path.exists(run_bin):
        mtime = datetime.datetime.fromtimestamp(
            os.path.getmtime(run_bin)).strftime("%Y-%m-%d %H:%M:%S")
    if len(subject) > 90:
        subject = subject[:90].rsplit(" ", 1)[0] + " ..."
    return {"commit": head, "subject": subject,
            "dirty": bool(dirty), "blockc_run_mtime": mtime}


def write_latest(out_dir, report, text):
    """DIR/latest.json (the report) and DIR/latest.md (its text), printed."""
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "latest.json"), "w") as f:
        json.dump(report, f, indent=1)
    with open(os.path.join(out_dir, "latest.md"), "w") as f:
        f.write(text)
    print(text)


def peer_env(threads):
    env = dict(os.environ)
    # Fair peers: these variables force OpenBLAS (and so PyTorch and NumPy)
    # onto its AVX2 kernels on AVX-512 CPUs. Cleared for the peers only,
    # never in tests or CI (../shared/PERF-ANCHORS.md).
    for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        env.pop(k, None)
    # OMP_PROC_BIND pins OpenBLAS's workers to one core inside torch
    # (PERF-ANCHORS trap); drop every affinity knob.
    for k in ("OMP_PROC_BIND", "OMP_PLACES", "GOMP_CPU_AFFINITY",
              "KMP_AFFINITY"):
        env.pop(k, None)
    for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[k] = str(threads)
    # Make libblas.so.3 resolve to OpenBLAS even where the Debian
    # alternative still points at the reference BLAS.
    if os.path.exists(os.path.join(OPENBLAS_DIR, "libblas.so.3")):
        env["LD_LIBRARY_PATH"] = OPENBLAS_DIR + (
            ":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    return env


# --- probes ----------------------------------------------------------------

def find_cc():
    for cc in ("clang-22", "clang", "gcc", "cc"):
        path = shutil.which(cc)
        if path:
            return path
    raise RuntimeError("no C compiler found (clang-22, clang, gcc, cc)")


def build_probes(tmp):
    cc = find_cc()
    out = {}
    for name in ("fma", "triad"):
        exe = os.path.join(tmp, name)
        cmd = [cc, "-O3", "-march=native", "-pthread",
               os.path.join(HERE, "probes", name + ".c"), "-o", exe]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode:
            raise RuntimeError("probe build failed: %s\n%s" %
                               (" ".join(cmd), p.stderr))
        out[name] = exe
    return cc, out


def parse_probe(text, key):
    res = {}
    for line in text.splitlines():
        f = dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)
        if line.startswith(key + " ") and "threads" in f:
            res[int(f["threads"])] = {k: (float(v) if re.fullmatch(
                r"[0-9.]+", v) else v) for k, v in f.items()}
    return res


def run_probes(exes, max_threads, quick):
    trials = "3" if quick else "5"
    fma = subprocess.run([exes["fma"], str(max_threads), trials],
                         capture_output=True, text=True, timeout=600)
    triad = subprocess.run([exes["triad"], str(max_threads), trials, "256"],
                           capture_output=True, text=True, timeout=600)
    if fma.returncode or triad.returncode:
        raise RuntimeError("probe failed:\n%s%s%s%s" % (
            fma.stdout, fma.stderr, triad.stdout, triad.stderr))
    return {"fma": parse_probe(fma.stdout, "fma"),
            "triad": parse_probe(triad.stdout, "triad"),
            "raw": fma.stdout + triad.stdout}


def limits(probe_runs, threads):
    """Best FMA GFLOP/s and triad GB/s seen for `threads` over all probes."""
    fma = max((p["fma"].get(threads, {}).get("best_gflops", 0.0)
               for p in probe_runs), default=0.0)
    triad = max((p["triad"].get(threads, {}).get("best_gbs", 0.0)
                 for p in probe_runs), default=0.0)
    return fma, triad


# --- configs, FLOPs, bytes -------------------------------------------------

def load_config(name):
    with open(os.path.join(HERE, "configs", name + ".json")) as f:
        c = json.load(f)
    d, H = c["hidden_size"], c["num_attention_heads"]
    return {
        "name": name, "path": os.path.join(HERE, "configs", name + ".json"),
        "d": d, "heads": H, "kv_heads": c.get("num_key_value_heads", H),
        "head_dim": c.get("head_dim", d // H), "d_ff": c["intermediate_size"],
        "eps": c.get("rms_norm_eps", 1e-6), "theta": c.get("rope_theta", 1e4),
    }


def proj_params(c):
    q, kv = c["heads"] * c["head_dim"], c["kv_heads"] * c["head_dim"]
    return c["d"] * q + 2 * c["d"] * kv + q * c["d"] + 3 * c["d"] * c["d_ff"]


def block_flops(c, T):
    """2*T*P for the projections + 4*T*L*H*dh for attention (full square,
    L = T: no KV cache), as in PERF-ANCHORS and blockc-run."""
    return (2.0 * T * proj_params(c)
            + 4.0 * T * T * c["heads"] * c["head_dim"])


def kv_bytes(c, L):
    """f32 bytes of the K and V caches one decode step reads (L tokens)."""
    return 2.0 * 4 * L * c["kv_heads"] * c["head_dim"]


def decode_flops(c, L):
    """One token against L cached ones: 2*P + 4*(L+1)*H*dh."""
    return 2.0 * proj_params(c) + 4.0 * (L + 1) * c["heads"] * c["head_dim"]


def weight_bytes(c):
    """f32 bytes of all the block's weights (projections + 2 norm gains)."""
    return 4.0 * (proj_params(c) + 2 * c["d"])


def repeats_for(c, T, base):
    """More timed runs for the short cases (cheap, and less noisy)."""
    est = block_flops(c, T) / 50e9 if T > 1 else weight_bytes(c) / 10e9
    if est >= 0.1:
        return base
    return max(base, min(50, int(1.0 / max(est, 1e-3))))


# --- measurements ----------------------------------------------------------

UNIT = {"us": 1e-3, "ms": 1.0, "s": 1e3}


def parse_blockc(out):
    r = {}
    m = re.search(r"^blockc-run: .*\((target [^)]*)\)\s*$", out, re.M)
    if m:
        r["mode_note"] = m.group(1)
        t = re.search(r"threads (\d+)", m.group(1))
        r["threads_used"] = int(t.group(1)) if t else None
    m = re.search(r"run\s+median ([0-9.]+) (us|ms|s) over (\d+) runs?"
                  r"(?: \(min ([0-9.]+) (us|ms|s)\))?", out)
    if m:
        r["median_ms"] = float(m.group(1)) * UNIT[m.group(2)]
        r["runs"] = int(m.group(3))
        if m.group(4):
            r["min_ms"] = float(m.group(4)) * UNIT[m.group(5)]
    m = re.search(r"flops\s+([0-9.eE+-]+) per run, ([0-9.]+) GFLOP/s", out)
    if m:
        r["flops_reported"] = float(m.group(1))
        r["gflops_reported"] = float(m.group(2))
    m = re.search(r"compile\s+([0-9.]+) (us|ms|s)(?: \(([^)]*)\))?", out)
    if m:
        r["compile_ms"] = float(m.group(1)) * UNIT[m.group(2)]
        r["compile_cache"] = m.group(3) or ""
    m = re.search(r"checksum (.*)", out)
    if m:
        r["checksum"] = m.group(1).strip()
        r["finite"] = "non-finite" not in m.group(1)
    return r


def bin_mtime(name):
    try:
        return datetime.datetime.fromtimestamp(os.path.getmtime(
            os.path.join(BIN, name))).strftime("%Y-%m-%d %H:%M:%S")
    except OSError:
        return None


def measure_blockc(model, T, threads, repeat, kv_len=0, extra=()):
    """`extra`: more blockc-run options (e.g. -cpu-features=none)."""
    built = bin_mtime("blockc-run")
    if kv_len:
        # Prefill kv_len tokens, then repeat+1 single-token steps through
        # the KV cache; the decode line's median is the per-token latency.
        cmd = [os.path.join(BIN, "blockc-run"), model, "--random-weights",
               "--random-input", "--seq-len=%d" % kv_len,
               "--decode=%d" % (repeat + 1), "--threads=%d" % threads]
    else:
        cmd = [os.path.join(BIN, "blockc-run"), model, "--random-weights",
               "--random-input", "--seq-len=%d" % T,
               "--repeat=%d" % (repeat + 1), "--threads=%d" % threads]
    cmd += list(extra)
    t0 = time.time()
    p = run_tool(cmd)
    r = parse_blockc(p.stdout)
    if kv_len:
        m = re.search(r"decode\s+(\d+) steps of 1 token: median ([0-9.]+) "
                      r"(us|ms|s), p90 ([0-9.]+) (us|ms|s)", p.stdout)
        if m:
            r["median_ms"] = float(m.group(2)) * UNIT[m.group(3)]
            r["p90_ms"] = float(m.group(4)) * UNIT[m.group(5)]
            r["runs"] = int(m.group(1))
    r.update(command=" ".join(os.path.relpath(a, ROOT) if a.startswith(ROOT)
                              else a for a in cmd),
             rc=p.returncode, wall_s=time.time() - t0,
             blockc_run_mtime=built)
    if bin_mtime("blockc-run") != built:
        r["relinked_during_run"] = True
    if p.returncode or "median_ms" not in r:
        r["error"] = (p.stdout + p.stderr)[-3000:]
        r.pop("median_ms", None)
    return r


def measure_rss(model, T):
    """Peak resident memory of one blockc-run (compile + one run) at
    sequence length T: the kernel's max RSS of the child (os.wait4)."""
    cmd = [os.path.join(BIN, "blockc-run"), model, "--random-weights",
           "--random-input", "--seq-len=%d" % T, "--repeat=1",
           "--threads=1"]
    t0 = time.time()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = p.stdout.read().decode(errors="replace")
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    r = {"T": T, "command": " ".join(os.path.relpath(a, ROOT)
                                     if a.startswith(ROOT) else a
                                     for a in cmd),
         "rc": p.returncode, "wall_s": time.time() - t0,
         "max_rss_mb": usage.ru_maxrss / 1024.0}
    r.update({k: v for k, v in parse_blockc(out).items()
              if k in ("median_ms", "compile_ms")})
    if p.returncode:
        r["error"] = out[-3000:]
    return r


def measure_peer(mode, c, T, threads, repeat, kv_len=0, dtype="f32"):
    cmd = [PYTHON, os.path.join(HERE, "peers.py"), mode,
           "--d", str(c["d"]), "--heads", str(c["heads"]),
           "--kv-heads", str(c["kv_heads"]), "--head-dim", str(c["head_dim"]),
           "--d-ff", str(c["d_ff"]), "--seq-len", str(T),
           "--threads", str(threads), "--repeat", str(repeat),
           "--eps", repr(c["eps"]), "--theta", repr(c["theta"])]
    if kv_len:
        cmd += ["--kv-len", str(kv_len)]
    if dtype != "f32":
        cmd += ["--dtype", dtype]
    t0 = time.time()
    try:
        p = subprocess.run(cmd, env=peer_env(threads), capture_output=True,
                           text=True, timeout=1800)
    except subprocess.TimeoutExpired:
        return {"error": "timed out", "command": " ".join(cmd)}
    try:
        r = json.loads(p.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        r = {"error": (p.stdout + p.stderr)[-3000:]}
    r.update(rc=p.returncode, wall_s=time.time() - t0)
    if p.returncode:
        r["error"] = (p.stdout + p.stderr)[-3000:]
        r.pop("median_ms", None)
    return r


def import_model(cfg, tmp):
    out = os.path.join(tmp, cfg["name"] + ".mlir")
    if not os.path.exists(out):
        cmd = [os.path.join(BIN, "blockc-import"),
               "--hf-config=" + cfg["path"], "-o", out]
        p = run_tool(cmd, timeout=300)
        if p.returncode:
            raise RuntimeError("blockc-import failed: %s\n%s%s" % (
                " ".join(cmd), p.stdout, p.stderr))
    return out


# --- report ----------------------------------------------------------------

def fmt(v, spec="%.1f", none="–"):
    return none if v is None or (isinstance(v, float) and math.isnan(v)) \
        else spec % v


def fmt_ms(v):
    if v is None:
        return "–"
    return "%.3f" % v if v < 1 else ("%.2f" % v if v < 100 else "%.1f" % v)


def derive(row, peaks):
    """Fill GFLOP/s, % of peak, ratios and bandwidths of one row."""
    fma, triad = peaks
    flops, wbytes = row["flops"], row["weight_bytes"]
    b, t, s = (row["blockc"].get("median_ms"), row["torch"].get("median_ms"),
               row["blas"].get("median_ms"))
    d = {}
    for key, ms in (("blockc", b), ("torch", t), ("blas", s)):
        d[key + "_gflops"] = flops / (ms * 1e-3) * 1e-9 if ms else None
        d[key + "_gbs"] = wbytes / (ms * 1e-3) * 1e-9 if ms else None
        d[key + "_pct_peak"] = (100 * d[key + "_gflops"] / fma
                                if ms and fma else None)
        d[key + "_pct_triad"] = (100 * d[key + "_gbs"] / triad
                                 if ms and triad else None)
    d["torch_over_blockc"] = t / b if t and b else None
    d["blas_over_blockc"] = s / b if s and b else None
    forced = row["blas"].get("forced_sgemm", {}).get("median_ms")
    d["forced_sgemm_over_blockc"] = forced / b if forced and b else None
    d["fma_peak_gflops"], d["triad_gbs"] = fma, triad
    row["derived"] = d


def blockc_threads_cell(row):
    used = row["blockc"].get("threads_used")
    if used is None:
        return "?"
    return str(used) if used == row["threads"] else \
        "%d (%d asked)" % (used, row["threads"])


def markdown(report):
    m, v = report["machine"], report["blockc"]
    lines = []
    lines.append("## Results: %s" % m["date_utc"])
    lines.append("")
    lines.append(
        "Machine: **%s** (%s), %s CPUs (%s core(s) per socket, %s thread(s) "
        "per core), %s, L2 %s, L3 %s, %s RAM, hypervisor %s, Linux %s. "
        "Load average at start %s." % (
            m["model_name"], m["cpu_family_model"], m["cpus"],
            m["cores_per_socket"], m["threads_per_core"], m["isa"], m["l2"],
            m["l3"], m["memory"], m["hypervisor"], m["kernel"],
            " / ".join("%.2f" % x for x in m["loadavg_start"])))
    lines.append("")
    lines.append("blockc %s%s (%s); blockc-run built %s. Peers: %s; %s. "
                 "Mode: %s, %d timed runs per measurement (more for short "
                 "cases), medians." % (
                     v["commit"], " + local changes" if v["dirty"] else "",
                     v["subject"], v["blockc_run_mtime"],
                     report["peers"].get("torch", "?"),
                     report["peers"].get("blas", "?"),
                     "quick" if report["quick"] else "full",
                     report["repeat"]))
    lines.append("")
    lines.append("Machine limits measured in this run (best of the probe "
                 "trials%s):" % ("" if report["quick"] else
                                 ", before and after the cases"))
    lines.append("")
    lines.append("| threads | FMA peak GFLOP/s (%s) | triad GB/s (3 x 256 MiB) |"
                 % report["probe_isa"])
    lines.append("|---|---|---|")
    for n in report["threads"]:
        runs = report["probes"]
        fmas = ", ".join("%.1f" % p["fma"][n]["best_gflops"] for p in runs
                         if n in p["fma"])
        tris = ", ".join("%.1f" % p["triad"][n]["best_gbs"] for p in runs
                         if n in p["triad"])
        f, t = limits(runs, n)
        lines.append("| %d | **%.1f** (%s) | **%.1f** (%s) |" % (
            n, f, fmas, t, tris))
    lines.append("")
    lines.append("| case | T | threads | blockc threads | blockc ms | "
                 "blockc GFLOP/s | % of FMA peak | PyTorch ms | torch/blockc "
                 "| sgemm-sum ms | sgemm/blockc | weights GB/s (T=1) "
                 "| % of triad (T=1) |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    failures = []
    for row in report["rows"]:
        d = row["derived"]
        decode = row["T"] == 1
        lines.append("| %s | %d | %d | %s | %s | %s | %s | %s | %s | %s | %s "
                     "| %s | %s |" % (
                         row["case"], row["T"], row["threads"],
                         blockc_threads_cell(row),
                         fmt_ms(row["blockc"].get("median_ms"))
                         if "error" not in row["blockc"] else "FAILED",
                         fmt(d["blockc_gflops"]),
                         fmt(d["blockc_pct_peak"], "%.0f%%"),
                         fmt_ms(row["torch"].get("median_ms"))
                         if "error" not in row["torch"] else "FAILED",
                         fmt(d["torch_over_blockc"], "%.2fx"),
                         fmt_ms(row["blas"].get("median_ms"))
                         if "error" not in row["blas"] else "FAILED",
                         fmt(d["blas_over_blockc"], "%.2fx"),
                         fmt(d["blockc_gbs"]) if decode else "–",
                         fmt(d["blockc_pct_triad"], "%.0f%%")
                         if decode else "–"))
        for k in ("blockc", "torch", "blas"):
            if "error" in row[k]:
                failures.append((row, k))
    lines.append("")
    lines.append("Ratios above 1 mean blockc is faster. Peers at the same "
                 "cases (block FLOPs or weight bytes / median time):")
    lines.append("")
    lines.append("| case | T | threads | PyTorch GFLOP/s | % of peak | "
                 "sgemm-sum GFLOP/s (block FLOPs) | PyTorch GB/s (T=1) "
                 "| sgemm-sum GB/s (T=1) | forced sgemm M=1 ms (T=1) |")
    lines.append("|---|---|---|---|---|---|---|---|---|")
    for row in report["rows"]:
        d = row["derived"]
        decode = row["T"] == 1
        forced = row["blas"].get("forced_sgemm", {}).get("median_ms")
        lines.append("| %s | %d | %d | %s | %s | %s | %s | %s | %s |" % (
            row["case"], row["T"], row["threads"], fmt(d["torch_gflops"]),
            fmt(d["torch_pct_peak"], "%.0f%%"), fmt(d["blas_gflops"]),
            fmt(d["torch_gbs"]) if decode else "–",
            fmt(d["blas_gbs"]) if decode else "–",
            fmt_ms(forced) if decode else "–"))
    lines.append("")
    mem = report.get("memory") or []
    if mem:
        cfg = load_config("mid")
        lines.append("Peak resident memory of one `blockc-run` (compile, "
                     "random weights and input, one run, 1 thread) of the "
                     "mid block: weights %.0f MB; a T x T score matrix per "
                     "head would add 4*T^2*H bytes." % (
                         weight_bytes(cfg) / 1e6))
        lines.append("")
        lines.append("| T | peak RSS MB | growth vs previous T | "
                     "T x T scores would be MB | run ms | compile ms |")
        lines.append("|---|---|---|---|---|---|")
        prev = None
        for r in mem:
            grow = ("%.0f MB for %dx T" % (r["max_rss_mb"] - prev["max_rss_mb"],
                                            r["T"] // prev["T"])
                    if prev else "–")
            lines.append("| %d | %s | %s | %.0f | %s | %s |" % (
                r["T"], "FAILED" if r.get("error") else
                "%.0f" % r["max_rss_mb"], grow,
                4.0 * r["T"] ** 2 * cfg["heads"] / 1e6,
                fmt_ms(r.get("median_ms")), fmt_ms(r.get("compile_ms"))))
            prev = r
        lines.append("")
    notes = []
    def compiles(hit):
        return sorted(r["blockc"]["compile_ms"] for r in report["rows"]
                      if r["case"] == "7b" and r["blockc"].get("compile_ms")
                      and (r["blockc"].get("compile_cache") == "cache hit")
                      == hit)
    cold, cached = compiles(False), compiles(True)
    if cold or cached:
        notes.append("Compiling the Llama-2-7B block (blockc-run's compile "
                     "line): cold (all passes, LLVM -O2, object linked in "
                     "memory) %s ms; from the compile cache %s ms (the "
                     "harness uses a cache directory of its own, empty at "
                     "the start)." %
                     (" / ".join("%.0f" % c for c in cold) or "-",
                      " / ".join("%.1f" % c for c in cached) or "-"))
    b_notes = sorted({r["blockc"].get("mode_note") for r in report["rows"]
                      if r["blockc"].get("mode_note")})
    if b_notes:
        notes.append("blockc-run said: " + "; ".join(
            "\"%s\"" % n for n in b_notes) + ".")
    notes.append("The 7b-kv512 and 7b-kv4096 rows are one decode step "
                 "against a KV cache of 512 or 4096 tokens: blockc-run "
                 "--decode (the per-token median after a prefill of L "
                 "tokens; the cache grows by one per step), PyTorch eager "
                 "with a preallocated cache written in place "
                 "(peers.py torch-decode); their GB/s count the weights "
                 "plus the K/V bytes read (%.0f / %.0f MB of cache), and "
                 "their sgemm-sum is the projections alone." % (
                     kv_bytes(load_config("7b"), 512) / 1e6,
                     kv_bytes(load_config("7b"), 4096) / 1e6))
    notes.append("T=1 is one token with no KV cache (L = 1): pure weight "
                 "streaming, %.0f MB of f32 weights per 7B block. numpy sends "
                 "[1, d] @ [d, out] to sgemv, so the sgemm-sum column is an "
                 "sgemv sum there; 'forced sgemm M=1' is the same products "
                 "through cblas_sgemm (what PyTorch eager calls)." %
                 (weight_bytes(load_config("7b")) / 1e6))
    for note in notes:
        lines.append("- " + note)
    if report.get("warnings"):
        for w in report["warnings"]:
            lines.append("- **Warning:** " + w)
    if failures:
        lines.append("")
        lines.append("### Failures")
        for row, k in failures:
            lines.append("")
            lines.append("%s, T=%d, %d thread(s), %s: `%s`" % (
                row["case"], row["T"], row["threads"], k,
                row[k].get("command", "")))
            lines.append("")
            lines.append("```")
            lines.append(row[k]["error"].rstrip())
            lines.append("```")
    lines.append("")
    lines.append("![chart](latest.png)" if report.get("chart") == "png"
                 else ("![chart](latest.svg)" if report.get("chart") == "svg"
                       else "(no chart)"))
    return "\n".join(lines) + "\n"


def chart(report, out_dir):
    """Bars: % of the measured machine limit, per case, one panel per thread
    count. Compute-bound cases (T > 1) against the FMA peak, T = 1 against
    the triad bandwidth (weight bytes / time)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return chart_svg(report, out_dir)
    threads = report["threads"]
    fig, axes = plt.subplots(1, len(threads), figsize=(6.5 * len(threads), 4.8),
                             squeeze=False, sharey=True)
    peers = [("blockc", "blockc", "#1f77b4"),
             ("torch", "PyTorch eager", "#ff7f0e"),
             ("blas", "OpenBLAS projection sum (sgemv at T=1)", "#7f7f7f")]
    top = 0
    for ax, n in zip(axes[0], threads):
        rows = [r for r in report["rows"] if r["threads"] == n]
        labels = []
        for i, row in enumerate(rows):
            d = row["derived"]
            decode = row["T"] == 1
            labels.append("%s\nT=%d\n(%s)" % (row["case"], row["T"],
                                              "% triad" if decode
                                              else "% FMA peak"))
            for j, (key, name, color) in enumerate(peers):
                pct = d[key + ("_pct_triad" if decode else "_pct_peak")]
                if pct is None:
                    continue
                top = max(top, pct)
                x = i + (j - 1) * 0.27
                ax.bar(x, pct, 0.27, color=color,
                       label=name if i == 0 else None)
                ms = row[key].get("median_ms")
                ax.text(x, pct + 1, fmt_ms(ms), ha="center", va="bottom",
                        fontsize=6.5, rotation=90)
        f, t = limits(report["probes"], n)
        ax.set_xticks(range(len(rows)))
        ax.set_xticklabels(labels, fontsize=8)
        ax.axhline(100, color="k", lw=0.8, ls="--")
        ax.set_title("%d thread%s (FMA peak %.0f GFLOP/s, triad %.1f GB/s)"
                     % (n, "" if n == 1 else "s", f, t), fontsize=9)
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].set_ylabel("% of measured machine limit (labels: median ms)")
    axes[0][0].legend(fontsize=8, loc="upper left")
    axes[0][0].set_ylim(0, max(110, top * 1.25))
    m = report["machine"]
    fig.suptitle("blockc vs peers: %s, %s CPUs, %s" % (
        m["model_name"], m["cpus"], m["date_utc"]), fontsize=10)
    fig.tight_layout()
    path = os.path.join(out_dir, "latest.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return "png"


def chart_svg(report, out_dir):
    """Hand-written SVG fallback when matplotlib is not installed."""
    rows = report["rows"]
    colors = {"blockc": "#1f77b4", "torch": "#ff7f0e", "blas": "#7f7f7f"}
    W, H, left, base = 120 + 70 * len(rows), 320, 50, 260
    parts = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
             'font-family="sans-serif" font-size="9">' % (W, H)]
    parts.append('<text x="%d" y="14">%% of measured limit (T&gt;1: FMA '
                 'peak, T=1: triad)</text>' % left)
    parts.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black" '
                 'stroke-dasharray="4"/>' % (left, base - 200, W - 10,
                                              base - 200))
    for i, row in enumerate(rows):
        d = row["derived"]
        key = "_pct_triad" if row["T"] == 1 else "_pct_peak"
        for j, k in enumerate(("blockc", "torch", "blas")):
            pct = d[k + key] or 0
            h = min(pct, 150) * 2
            x = left + 70 * i + 18 * j
            parts.append('<rect x="%d" y="%.1f" width="16" height="%.1f" '
                         'fill="%s"/>' % (x, base - h, h, colors[k]))
        parts.append('<text x="%d" y="%d">%s T=%d %dt</text>' % (
            left + 70 * i, base + 14, row["case"], row["T"], row["threads"]))
    parts.append("</svg>")
    with open(os.path.join(out_dir, "latest.svg"), "w") as f:
        f.write("\n".join(parts))
    return "svg"


def update_readme(md, out_dir):
    path = os.path.join(HERE, "README.md")
    rel = os.path.relpath(out_dir, HERE)
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return False
    if README_BEGIN not in text or README_END not in text:
        return False
    md = md.replace("![chart](latest.png)", "![chart](%s/latest.png)" % rel)
    md = md.replace("![chart](latest.svg)", "![chart](%s/latest.svg)" % rel)
    md = md.replace("## Results:", "### Latest results:", 1)
    head, rest = text.split(README_BEGIN, 1)
    _, tail = rest.split(README_END, 1)
    with open(path, "w") as f:
        f.write(head + README_BEGIN + "\n\n" + md + "\n" + README_END + tail)
    return True


def finish(report):
    """Name the peers' BLAS, collect warnings, derive the table's values."""
    warnings = list(report.get("base_warnings", []))
    threads = report["threads"]
    # Which BLAS the peers really ran on.
    libs = sorted({lib for r in report["rows"] for k in ("torch", "blas")
                   for lib in r[k].get("blas_libraries", [])})
    cfgs = {r[k]["openblas"]["config"] for r in report["rows"]
            for k in ("torch", "blas") if r[k].get("openblas")}
    torch_v = next((r["torch"].get("torch_version") for r in report["rows"]
                    if r["torch"].get("torch_version")), "?")
    numpy_v = next((r["blas"].get("numpy_version") for r in report["rows"]
                    if r["blas"].get("numpy_version")), "?")
    blas_name = ", ".join(sorted(cfgs)) or "not OpenBLAS: " + ", ".join(libs)
    report["peers"] = {"torch": "PyTorch %s eager" % torch_v,
                       "blas": "numpy %s on %s" % (numpy_v, blas_name),
                       "blas_libraries": libs}
    if not cfgs:
        warnings.append("the peers did not run on OpenBLAS (mapped: %s)"
                        % ", ".join(libs))
    for r in report["rows"]:
        for k in ("torch", "blas"):
            env = r[k].get("env", {})
            if env.get("OMP_PROC_BIND"):
                warnings.append("OMP_PROC_BIND was set for a peer")
    builds = sorted({r["blockc"].get("blockc_run_mtime") for r in
                     report["rows"]} - {None})
    if len(builds) > 1 or any(r["blockc"].get("relinked_during_run")
                              for r in report["rows"]):
        warnings.append("blockc-run was rebuilt during this run (binaries "
                        "from %s): rows may come from different builds"
                        % ", ".join(builds))
    for n in threads:
        peaks = limits(report["probes"], n)
        for row in report["rows"]:
            if row["threads"] == n:
                derive(row, peaks)
    # Sanity of the measured limits.
    f1 = limits(report["probes"], 1)[0] if 1 in threads else 0
    for n in threads:
        fn, tn = limits(report["probes"], n)
        if n > 1 and f1 and fn < 1.3 * f1:
            warnings.append(
                "the %d-thread FMA probe (%.0f GFLOP/s) barely beats 1 thread "
                "(%.0f): the vCPUs shared a core or another job was running "
                "during the probe, so %d-thread %%-of-peak figures are "
                "unreliable in this run" % (n, fn, f1, n))
        for row in report["rows"]:
            for key, name in (("blockc", "blockc"), ("torch", "PyTorch"),
                              ("blas", "the sgemm-sum")):
                own = None
                ms = row[key].get("median_ms")
                if row["threads"] == n and ms and row["T"] > 1:
                    flops = (2.0 * row["T"] * proj_params(row["shape"])
                             if key == "blas" else row["flops"])
                    own = flops / (ms * 1e-3) * 1e-9
                if own and fn and own > 1.02 * fn:
                    warnings.append(
                        "%s at %s T=%d, %d thread(s) ran at %.0f GFLOP/s of "
                        "its own FLOPs, above the measured %d-thread FMA peak "
                        "(%.0f): the probe was disturbed"
                        % (name, row["case"], row["T"], n, own, n, fn))
    report["warnings"] = sorted(set(warnings))


# --- main ------------------------------------------------------------------

def machine_slug(m):
    """results/ folder name of a machine: vendor model, family/model, ISA
    (e.g. amd-epyc-f26m2-avx512)."""
    name = re.sub(r"[^a-z0-9]+", "-", m["model_name"].lower()).strip("-")
    fm = re.match(r"family (\S+) model (\S+)", m["cpu_family_model"])
    isa = re.sub(r"[^a-z0-9]+", "", m["isa"].lower())
    return "%s-f%sm%s-%s" % (name, fm.group(1) if fm else "x",
                             fm.group(2) if fm else "x", isa)


def main():
    ap = argparse.ArgumentParser(
        description="blockc vs PyTorch eager vs OpenBLAS, with FMA and "
        "bandwidth probes, in one run.")
    ap.add_argument("--quick", action="store_true",
                    help="only small (T=128) and 7b-decode (T=1), 1 thread")
    ap.add_argument("--threads", default=None,
                    help="comma-separated thread counts (default 1,2; "
                    "1 with --quick)")
    ap.add_argument("--repeat", type=int, default=None,
                    help="timed runs per measurement after a warm-up "
                    "(default 5, 3 with --quick; short cases get more)")
    ap.add_argument("--cases", default=None,
                    help="comma-separated subset of: " +
                    ",".join(c[0] for c in CASES))
    ap.add_argument("--memory", default=None,
                    help="comma-separated sequence lengths for the peak-RSS "
                    "series of the mid block (default 1024,2048,4096 in a "
                    "full run, none with --quick or --cases; 'none' skips)")
    ap.add_argument("--out", default=None, help="output directory")
    ap.add_argument("--no-readme", action="store_true",
                    help="do not refresh benchmarks/README.md")
    ap.add_argument("--render", metavar="JSON",
                    help="measure nothing: rebuild latest.md, the chart and "
                    "the README section from this latest.json")
    a = ap.parse_args()
    # blockc-run's compile cache: a directory of the harness's own, empty at
    # the start, so that each model's first compile is cold and the later
    # ones are cache hits (both reported); the user's cache is untouched.
    bench_cache = tempfile.mkdtemp(prefix="blockc-bench-cache-")
    os.environ["XDG_CACHE_HOME"] = bench_cache
    atexit.register(shutil.rmtree, bench_cache, True)
    if a.render:
        return render(a.render, a.no_readme)

    threads = [int(t) for t in (a.threads or ("1" if a.quick else "1,2"))
               .split(",")]
    repeat = a.repeat or (3 if a.quick else 5)
    names = (a.cases.split(",") if a.cases
             else QUICK_CASES if a.quick else [c[0] for c in CASES])
    cases = [c for c in CASES if c[0] in names]
    unknown = set(names) - {c[0] for c in cases}
    if unknown:
        ap.error("unknown case(s): " + ", ".join(sorted(unknown)))
    # Results are kept per CPU model and ISA (results/<slug>/), so that the
    # figures of every kind of machine stay visible side by side.
    default_out = os.path.join(HERE, "results", machine_slug(machine_info()),
                               "quick" if a.quick else "")
    out_dir = os.path.abspath(a.out or default_out)
    os.makedirs(out_dir, exist_ok=True)

    warnings = []
    if not os.path.exists(os.path.join(OPENBLAS_DIR, "libblas.so.3")):
        warnings.append("OpenBLAS (libopenblas0-pthread) is not installed: "
                        "numpy and torch use whatever libblas.so.3 points "
                        "to (see blas_libraries in latest.json).")
    t_start = time.time()
    tmp = tempfile.mkdtemp(prefix="blockc-bench-")
    try:
        report = {"quick": a.quick, "threads": threads, "repeat": repeat,
                  "machine": machine_info(), "blockc": blockc_version(),
                  "flop_count": "2*T*P (projections) + 4*T*L*H*dh "
                  "(attention, full square, L=T)", "rows": [], "probes": []}
        m = report["machine"]
        log("blockc benchmark: %s, %s CPUs, %s" % (
            m["model_name"], m["cpus"], m["date_utc"]))
        cc, exes = build_probes(tmp)
        report["probe_compiler"] = sh([cc, "--version"]).splitlines()[0]
        log("probes (built with %s) ..." % os.path.basename(cc))
        report["probes"].append(run_probes(exes, max(threads), a.quick))
        report["probe_isa"] = next(iter(report["probes"][0]["fma"].values()),
                                   {}).get("isa", "?")
        for n in threads:
            f, t = limits(report["probes"], n)
            log("  %d thread(s): FMA %.1f GFLOP/s, triad %.1f GB/s" % (n, f, t))

        for case, cfg_name, T, kv_len in cases:
            cfg = load_config(cfg_name)
            model = import_model(cfg, tmp)
            flops, wbytes = block_flops(cfg, T), weight_bytes(cfg)
            if kv_len:
                # Bytes one step must read: the weights and the K/V caches.
                flops = decode_flops(cfg, kv_len)
                wbytes = weight_bytes(cfg) + kv_bytes(cfg, kv_len)
            reps = repeats_for(cfg, T, repeat)
            for n in threads:
                log("%s T=%d, %d thread(s), %d runs:" % (case, T, n, reps))
                row = {"case": case, "config": cfg_name, "T": T,
                       "kv_len": kv_len, "kv_bytes": kv_bytes(cfg, kv_len),
                       "threads": n, "repeat": reps, "flops": flops,
                       "weight_bytes": wbytes,
                       "shape": {k: cfg[k] for k in ("d", "heads", "kv_heads",
                                                     "head_dim", "d_ff")}}
                row["blockc"] = measure_blockc(model, T, n, reps, kv_len)
                log("  blockc    %s" % (fmt_ms(row["blockc"].get("median_ms"))
                                        + " ms" if "error" not in
                                        row["blockc"] else "FAILED"))
                rf = row["blockc"].get("flops_reported")
                if rf and not kv_len and abs(rf - flops) > 1e-3 * flops:
                    warnings.append("%s T=%d: blockc-run counts %.4g FLOPs, "
                                    "this harness %.4g" % (case, T, rf, flops))
                row["torch"] = measure_peer(
                    "torch-decode" if kv_len else "torch", cfg, T, n, reps,
                    kv_len)
                log("  PyTorch   %s" % (fmt_ms(row["torch"].get("median_ms"))
                                        + " ms" if "error" not in
                                        row["torch"] else "FAILED"))
                row["blas"] = measure_peer("blas", cfg, T, n, reps)
                log("  sgemm-sum %s" % (fmt_ms(row["blas"].get("median_ms"))
                                        + " ms" if "error" not in
                                        row["blas"] else "FAILED"))
                report["rows"].append(row)

        mem_ts = ([] if a.memory == "none" else
                  [int(t) for t in a.memory.split(",")] if a.memory else
                  [] if a.quick or a.cases else [1024, 2048, 4096])
        report["memory"] = []
        if mem_ts:
            cfg = load_config("mid")
            model = import_model(cfg, tmp)
            for T in mem_ts:
                log("peak RSS, mid block, T=%d ..." % T)
                r = measure_rss(model, T)
                log("  %.0f MB" % r["max_rss_mb"])
                report["memory"].append(r)

        if not a.quick:
            log("probes again ...")
            report["probes"].append(run_probes(exes, max(threads), a.quick))
        report["machine"]["loadavg_end"] = list(os.getloadavg())
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    report["base_warnings"] = warnings
    finish(report)
    report["elapsed_s"] = time.time() - t_start

    full = set(names) == {c[0] for c in CASES}
    return write_outputs(report, out_dir, not a.quick and not a.no_readme
                         and a.out is None and full)


def write_outputs(report, out_dir, readme):
    report["chart"] = chart(report, out_dir)
    md = markdown(report)
    with open(os.path.join(out_dir, "latest.md"), "w") as f:
        f.write(md)
    with open(os.path.join(out_dir, "latest.json"), "w") as f:
        json.dump(report, f, indent=1, sort_keys=False)
        f.write("\n")
    print()
    print(md)
    readme = readme and update_readme(md, out_dir)
    log("wrote %s/latest.{md,json,%s}%s (%.0f s)" % (
        os.path.relpath(out_dir, os.getcwd()), report["chart"],
        " and benchmarks/README.md" if readme else "",
        report.get("elapsed_s", 0)))
    failed = any("error" in r[k] for r in report["rows"]
                 for k in ("blockc", "torch", "blas"))
    return 1 if failed else 0


def render(path, no_readme):
    """Rebuild the table, chart and README section from a latest.json."""
    with open(path) as f:
        report = json.load(f)
    # JSON turns the probes' integer thread keys into strings.
    for p in report["probes"]:
        for k in ("fma", "triad"):
            p[k] = {int(n): v for n, v in p[k].items()}
    finish(report)
    out_dir = os.path.dirname(os.path.abspath(path))
    default = os.path.join(HERE, "results")
    return write_outputs(report, out_dir, not no_readme and not report["quick"]
                         and os.path.samefile(out_dir, default))


if __name__ == "__main__":
    sys.exit(main())
