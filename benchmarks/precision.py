#!/usr/bin/env python3
"""Reduced-precision benchmark: the Llama-2-7B block in f32, bf16, int8 and
int4 (weight-only in groups of 32 and of 128, and with the activations
quantised to int8; int4 weights also in a bf16 block), side by side, with
PyTorch eager f32 and bf16 in the same run (the types in TYPES below).

  benchmarks/precision.py [--rounds 3] [--repeat 10] [--quick] [--out DIR]
                         [--types bf16,...] [--cases prefill,...]
(--types and --cases run a subset: f32, the reference of every ratio, is
always measured; the cases are decode, decode-kv512, prefill and pairs.)

Cases (1 thread unless noted):

* decode, one token without a cache (T = 1) and one token against a KV
  cache of L = 512: time per token, the bytes a token reads (weights in
  their type + the K/V cache) and that traffic as a % of the machine's
  measured triad bandwidth (benchmarks/probes/triad.c, same run);
* prefill T = 128: time and GFLOP/s; the ratio to f32 is the target
  (>= 0.9x);
* a projection pair, up (4096 -> 14336) then down (14336 -> 4096), 2
  threads, one token and 512 tokens: blockc-run entries return their input
  type, so one 4096 x 14336 projection is timed as half the pair (both
  have the same weight count and FLOPs).

Every blockc configuration is measured in each of --rounds rounds, the
types interleaved (A/B/A/B), and the medians of all rounds reported. The
results go to DIR/precision.json and DIR/precision.md (default
benchmarks/results/precision-<machine>/).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run as bench  # noqa: E402  (shared probes, parsing, peers)

TYPES = [
    # name, blockc-import options, bytes per norm gain and K/V cache element,
    # blockc-run options, the projection weights' storage (see proj_bytes)
    ("f32", [], 4.0, [], "f32"),
    # bf16 as compiled for this host: AMX tiles (prefill) and vdpbf16ps
    # where the CPU has them and they pay (docs/Precision.md), ...
    ("bf16", ["--dtype=bf16"], 2.0, [], "bf16"),
    # ... on the f32 FMA kernels (bf16 widened in registers) ...
    ("bf16-fma", ["--dtype=bf16"], 2.0, ["-cpu-features=none"], "bf16"),
    # ... and on vdpbf16ps alone (AVX512_BF16 hosts only).
    ("bf16-dot", ["--dtype=bf16"], 2.0, ["-cpu-features=avx512bf16"],
     "bf16"),
    ("int8", ["--quantize=int8"], 4.0, [], "int8"),
    ("int4", ["--quantize=int4"], 4.0, [], "int4"),
    # int4 with groups of 128 (one scale per 128 values).
    ("int4-g128", ["--quantize=int4", "--group-size=128"], 4.0, [],
     "int4-g128"),
    # The activations quantised too (integer dot products).
    ("int8+act", ["--quantize=int8", "--quantize-activations=int8"], 4.0,
     [], "int8"),
    ("int4+act", ["--quantize=int4", "--quantize-activations=int8"], 4.0,
     [], "int4"),
    # int4 weights in a bf16 block, as compiled for this host, and with
    # vdpbf16ps alone (AVX512_BF16 hosts only: the int4 values as bf16
    # pairs, which blockc-cpu-select-tiles leaves out on AMX cores).
    ("bf16-int4", ["--dtype=bf16", "--quantize=int4"], 2.0, [], "int4"),
    ("bf16-int4-dot", ["--dtype=bf16", "--quantize=int4"], 2.0,
     ["-cpu-features=avx512bf16"], "int4"),
]
# Types that need a CPU feature of the host.
NEEDS = {"bf16-dot": "avx512_bf16", "bf16-int4-dot": "avx512_bf16"}


def host_has(flag):
    try:
        with open("/proc/cpuinfo") as fh:
            return any(flag in line.split() for line in fh
                       if line.startswith("flags"))
    except OSError:
        return False


def openblas_kernels():
    """The BLAS libraries (and OpenBLAS's kernel, threadpoolctl's
    `architecture`) that the peers load, in the peers' environment. Without
    threadpoolctl: each OpenBLAS mapped into the peer process (its
    /proc/self/maps) asked for its kernel with openblas_get_corename."""
    code = ("import json, numpy, torch\n"
            "try:\n"
            "    import threadpoolctl\n"
            "    print(json.dumps([[i.get('internal_api'),"
            " i.get('architecture'), i.get('version')]"
            " for i in threadpoolctl.threadpool_info()"
            " if i.get('user_api') == 'blas']))\n"
            "except ImportError:\n"
            "    import ctypes, os\n"
            "    libs = sorted({os.path.realpath(l.split()[-1])"
            " for l in open('/proc/self/maps')"
            " if 'openblas' in l and '.so' in l})\n"
            "    out = []\n"
            "    for path in libs:\n"
            "        f = ctypes.CDLL(path).openblas_get_corename\n"
            "        f.restype = ctypes.c_char_p\n"
            "        out.append(['openblas', f().decode(), path])\n"
            "    print(json.dumps(out))\n")
    try:
        p = subprocess.run([bench.PYTHON, "-c", code], env=bench.peer_env(1),
                           capture_output=True, text=True, timeout=120)
        return json.loads(p.stdout.strip().splitlines()[-1])
    except (OSError, subprocess.TimeoutExpired, IndexError, ValueError):
        return None


def onednn_kernel(dtype):
    """The oneDNN implementation PyTorch eager runs a `dtype` matmul with
    (ONEDNN_VERBOSE), in the peer's environment, or None."""
    code = ("import torch; torch.set_num_threads(1); "
            "a = torch.randn(128, 512).to(torch.%s); "
            "w = torch.randn(512, 512).to(torch.%s); a @ w.t()"
            % (dtype, dtype))
    env = dict(bench.peer_env(1), ONEDNN_VERBOSE="1", DNNL_VERBOSE="1")
    try:
        p = subprocess.run([bench.PYTHON, "-c", code], env=env,
                           capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return None
    for line in p.stdout.splitlines():
        parts = line.split(",")
        if len(parts) > 5 and parts[1] == "exec" and parts[3] == "matmul":
            return parts[4]
    return None


def proj_bytes(c, name):
    """Bytes of the block's projection weights as the kernels read them."""
    p = bench.proj_params(c)
    if name == "f32":
        return 4.0 * p
    if name == "bf16":
        return 2.0 * p
    # One f32 scale per output row (int8) or per 32 values (int4); the
    # output rows of the seven projections.
    q, kv = c["heads"] * c["head_dim"], c["kv_heads"] * c["head_dim"]
    rows = q + 2 * kv + c["d"] + 2 * c["d_ff"] + c["d"]
    if name == "int8":
        return 1.0 * p + 4.0 * rows
    return 0.5 * p + 4.0 * p / (128 if name == "int4-g128" else 32)


def pair_bytes(name):
    """Weight bytes of the up + down pair (2 x 4096 x 14336)."""
    p, rows = 2 * 4096 * 14336, 14336 + 4096
    return {"f32": 4.0 * p, "bf16": 2.0 * p, "int8": 1.0 * p + 4.0 * rows,
            "int4": 0.5 * p + 4.0 * p / 32,
            "int4-g128": 0.5 * p + 4.0 * p / 128}[name]


def storage(name):
    return dict((t[0], t[4]) for t in TYPES)[name]


def token_bytes(c, name, L):
    elt = dict((t[0], t[2]) for t in TYPES)[name]
    kv = 2.0 * elt * L * c["kv_heads"] * c["head_dim"]
    return proj_bytes(c, storage(name)) + elt * 2 * c["d"] + kv


def pair_model(tmp, dtype, quant, group=32, act=False):
    """up (4096 -> 14336) then down (14336 -> 4096) in `dtype`, optionally
    quantised (int4 in groups of `group`; `act`: the activations too)."""
    d, f = 4096, 14336
    attr = ""
    extra = ", activations = int8" if act else ""
    if quant == "int8":
        attr = " {weight_quant = #transformer.weight_quant<int8%s>}" % extra
    elif quant == "int4":
        attr = (" {weight_quant = #transformer.weight_quant<int4, "
                "group_size = %d%s>}" % (group, extra))
    t = dtype
    text = f"""func.func @forward(%x: tensor<?x?x{d}x{t}>,
    %wu: tensor<{f}x{d}x{t}> {{transformer.weight_name = "up"}},
    %wd: tensor<{d}x{f}x{t}> {{transformer.weight_name = "down"}}) -> tensor<?x?x{d}x{t}> {{
  %h = transformer.linear %x, %wu{attr} : tensor<?x?x{d}x{t}>, tensor<{f}x{d}x{t}> -> tensor<?x?x{f}x{t}>
  %y = transformer.linear %h, %wd{attr} : tensor<?x?x{f}x{t}>, tensor<{d}x{f}x{t}> -> tensor<?x?x{d}x{t}>
  return %y : tensor<?x?x{d}x{t}>
}}
"""
    path = os.path.join(tmp, "pair.%s.%s.g%d%s.mlir"
                        % (dtype, quant or "none", group, ".act" if act else ""))
    with open(path, "w") as fh:
        fh.write(text)
    return path


def median_of(results):
    vals = [r["median_ms"] for r in results if "median_ms" in r]
    return statistics.median(vals) if vals else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--quick", action="store_true",
                    help="one round, fewer repeats, no L = 512 case")
    ap.add_argument("--out", default=None)
    ap.add_argument("--types", default=None,
                    help="comma-separated subset of the blockc types "
                         "(default: all the host can run)")
    ap.add_argument("--cases", default=None,
                    help="comma-separated subset of decode, decode-kv512, "
                         "prefill, pairs (default: all)")
    a = ap.parse_args()
    if a.quick:
        a.rounds, a.repeat = 1, 5
    # The peers are part of the result: refuse to run without them.
    if subprocess.run([bench.PYTHON, "-c", "import torch"],
                      capture_output=True).returncode != 0:
        sys.exit("precision.py: error: PyTorch is not importable by %s; "
                 "benchmarks/setup.sh installs it (python3-torch)"
                 % bench.PYTHON)
    machine = bench.machine_info()
    out_dir = a.out or os.path.join(
        bench.HERE, "results", "precision-" + bench.machine_slug(machine))
    os.makedirs(out_dir, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="blockc-precision-")
    c = bench.load_config("7b")
    cc, exes = bench.build_probes(tmp)
    probes = [bench.run_probes(exes, 2, a.quick)]

    types = [t for t in TYPES if t[0] not in NEEDS or host_has(NEEDS[t[0]])]
    if a.types:
        wanted = a.types.split(",")
        unknown = set(wanted) - set(t[0] for t in TYPES)
        if unknown:
            ap.error("unknown --types: %s" % ",".join(sorted(unknown)))
        # f32 is every ratio's reference.
        types = [t for t in types if t[0] in wanted or t[0] == "f32"]
    want_case = (lambda name: True) if not a.cases else \
        (lambda name: name in a.cases.split(","))
    run_args = dict((t[0], t[3]) for t in types)
    models = {}
    for name, opts, _, _, _ in types:
        path = os.path.join(tmp, "7b.%s.mlir" % name)
        subprocess.run([os.path.join(bench.BIN, "blockc-import"),
                        "--hf-config=" + c["path"], "-o", path] + opts,
                       check=True)
        models[name] = path
    pairs = {}
    if want_case("pairs"):
        pairs = {"f32": pair_model(tmp, "f32", None),
                 "bf16": pair_model(tmp, "bf16", None),
                 "int8": pair_model(tmp, "f32", "int8"),
                 "int4": pair_model(tmp, "f32", "int4"),
                 "int4-g128": pair_model(tmp, "f32", "int4", group=128),
                 "int8+act": pair_model(tmp, "f32", "int8", act=True),
                 "int4+act": pair_model(tmp, "f32", "int4", act=True),
                 "bf16-int4": pair_model(tmp, "bf16", "int4")}
        for name in run_args:
            if name in ("bf16-fma", "bf16-dot"):
                pairs[name] = pairs["bf16"]
            elif name == "bf16-int4-dot":
                pairs[name] = pairs["bf16-int4"]

    cases = [("decode", 1, 1, 0), ("prefill", 128, 1, 0)]
    if not a.quick:
        cases.insert(1, ("decode-kv512", 1, 1, 512))
    cases = [cs for cs in cases if want_case(cs[0])]
    pair_tokens = (1, 512) if pairs else ()
    runs = {}
    for rnd in range(a.rounds):
        for case, T, threads, L in cases:
            for name in run_args:
                bench.log("round %d %s %s" % (rnd + 1, case, name))
                rep = a.repeat if T > 1 else 3 * a.repeat
                r = bench.measure_blockc(models[name], T, threads, rep,
                                         kv_len=L, extra=run_args[name])
                runs.setdefault((case, name), []).append(r)
        for T in pair_tokens:
            for name in run_args:
                bench.log("round %d pair T=%d %s" % (rnd + 1, T, name))
                r = bench.measure_blockc(pairs[name], T, 2,
                                         a.repeat if T > 1 else 3 * a.repeat,
                                         extra=run_args[name])
                runs.setdefault(("pair-%d" % T, name), []).append(r)
        # PyTorch eager, f32 and bf16, in the same round.
        for dtype in ("f32", "bf16"):
            for case, T, threads, L in cases:
                mode = "torch-decode" if L else "torch"
                bench.log("round %d torch %s %s" % (rnd + 1, dtype, case))
                # Eager bf16 prefill takes ~30 s a run on AVX2 (torch 1.13
                # has no fast bf16 GEMM there): fewer runs.
                rep = 2 if (dtype == "bf16" and T > 1) else a.repeat
                r = bench.measure_peer(mode, c, T, threads, rep,
                                       kv_len=L, dtype=dtype)
                runs.setdefault((case, "torch-" + dtype), []).append(r)
    probes.append(bench.run_probes(exes, 2, a.quick))
    fma1, triad1 = bench.limits(probes, 1)
    fma2, triad2 = bench.limits(probes, 2)

    rows = []
    for case, T, threads, L in cases:
        f32 = median_of(runs[(case, "f32")])
        for name in list(run_args) + ["torch-f32", "torch-bf16"]:
            ms = median_of(runs.get((case, name), []))
            row = {"case": case, "type": name, "T": T, "L": L,
                   "threads": threads, "median_ms": ms,
                   "runs": [r.get("median_ms") for r in
                            runs.get((case, name), [])]}
            if ms and f32:
                row["speedup_vs_f32"] = f32 / ms
            if ms and not name.startswith("torch"):
                if case.startswith("decode"):
                    b = token_bytes(c, name, L)
                    row["bytes_per_token"] = b
                    row["gb_s"] = b / (ms * 1e-3) / 1e9
                    row["pct_triad"] = 100.0 * row["gb_s"] / triad1
                else:
                    fl = bench.block_flops(c, T)
                    row["gflops"] = fl / (ms * 1e-3) / 1e9
                    row["pct_fma"] = 100.0 * row["gflops"] / fma1
            rows.append(row)
    for T in pair_tokens:
        f32 = median_of(runs[("pair-%d" % T, "f32")])
        for name in run_args:
            ms = median_of(runs[("pair-%d" % T, name)])
            proj = ms / 2 if ms else None
            row = {"case": "projection 4096x14336 T=%d" % T, "type": name,
                   "T": T, "threads": 2, "median_ms": proj}
            if proj:
                row["gflops"] = 2.0 * T * 4096 * 14336 / (proj * 1e-3) / 1e9
                row["speedup_vs_f32"] = f32 / ms if f32 else None
                if T == 1:
                    b = pair_bytes(storage(name)) / 2
                    row["bytes_per_token"] = b
                    row["gb_s"] = b / (proj * 1e-3) / 1e9
                    row["pct_triad"] = 100.0 * row["gb_s"] / triad2
            rows.append(row)

    report = {"machine": machine, "probes": {"fma_1t": fma1, "triad_1t":
                                             triad1, "fma_2t": fma2,
                                             "triad_2t": triad2},
              "rounds": a.rounds, "repeat": a.repeat, "rows": rows,
              "peer_kernels": {"onednn_bf16_matmul": onednn_kernel("bfloat16"),
                               "onednn_f32_matmul": onednn_kernel("float32"),
                               "blas": openblas_kernels()}}
    with open(os.path.join(out_dir, "precision.json"), "w") as fh:
        json.dump(report, fh, indent=1)
    md = markdown(report)
    md += ("Peers' kernels (same environment as the peers, OPENBLAS_CORETYPE "
           "and OPENBLAS_L2_SIZE cleared): %s\n"
           % json.dumps(report["peer_kernels"]))
    with open(os.path.join(out_dir, "precision.md"), "w") as fh:
        fh.write(md)
    print(md)
    return 0


def fmt(v, spec):
    return "–" if v is None else spec % v


def markdown(rep):
    m, p = rep["machine"], rep["probes"]
    out = ["# Reduced precision: Llama-2-7B block per type", "",
           "Machine: %s, %s; measured in the same run: FMA %.0f GFLOP/s "
           "(1 thread), triad %.1f GB/s (1 thread), %.1f GB/s (2 threads). "
           "%d rounds, types interleaved; medians."
           % (m.get("model_name", "?") + " (" + m.get("cpu_family_model", "?")
              + ")", m.get("isa", "?"), p["fma_1t"],
              p["triad_1t"], p["triad_2t"], rep["rounds"]), "",
           "| case | type | time | vs f32 | bytes/token | GB/s | % triad "
           "| GFLOP/s |", "|---|---|---|---|---|---|---|---|"]
    for r in rep["rows"]:
        out.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["case"] + (" L=%d" % r["L"] if r.get("L") else "")
            + (" T=%d" % r["T"] if r["case"] == "prefill" else "")
            + (" (2 threads)" if r.get("threads") == 2 else ""),
            r["type"], fmt(r.get("median_ms"), "%.2f ms"),
            fmt(r.get("speedup_vs_f32"), "%.2fx"),
            fmt(r.get("bytes_per_token") and r["bytes_per_token"] / 2**20,
                "%.0f MiB"),
            fmt(r.get("gb_s"), "%.1f"), fmt(r.get("pct_triad"), "%.0f%%"),
            fmt(r.get("gflops"), "%.0f")))
    out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
