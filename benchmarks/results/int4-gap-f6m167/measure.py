#!/usr/bin/env python3
"""Step 1: cause of the int4 one-token gap. Same run, interleaved rounds."""
import os, sys, statistics, json, subprocess
sys.path.insert(0, "/work/main/benchmarks")
import precision, run as bench, ggml as G
tmp = "/tmp/int4m/models"; os.makedirs(tmp, exist_ok=True)
th = int(sys.argv[1]) if len(sys.argv) > 1 else 2
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
models = {
 "int4 g32": precision.pair_model(tmp, "f32", "int4", 32),
 "int4 g128": precision.pair_model(tmp, "f32", "int4", 128),
 "int4+act g32": precision.pair_model(tmp, "f32", "int4", 32, act=True),
 "int4+act g128": precision.pair_model(tmp, "f32", "int4", 128, act=True),
 "int8": precision.pair_model(tmp, "f32", "int8"),
}
# an in-cache pair: 1024 -> 2048 -> 1024 (2 x 2M weights, 1.3 MB each at g32)
def small(g, act):
    extra = ", activations = int8" if act else ""
    a = "{weight_quant = #transformer.weight_quant<int4, group_size = %d%s>}" % (g, extra)
    p = os.path.join(tmp, "small.g%d%s.mlir" % (g, ".act" if act else ""))
    open(p, "w").write(f"""func.func @forward(%x: tensor<?x?x1024xf32>,
    %wu: tensor<2048x1024xf32> {{transformer.weight_name = "up"}},
    %wd: tensor<1024x2048xf32> {{transformer.weight_name = "down"}}) -> tensor<?x?x1024xf32> {{
  %h = transformer.linear %x, %wu {a} : tensor<?x?x1024xf32>, tensor<2048x1024xf32> -> tensor<?x?x2048xf32>
  %y = transformer.linear %h, %wd {a} : tensor<?x?x2048xf32>, tensor<1024x2048xf32> -> tensor<?x?x1024xf32>
  return %y : tensor<?x?x1024xf32>
}}
""")
    return p
models["L2 int4 g32"] = small(32, False)
models["L2 int4 g128"] = small(128, False)
models["L2 int4+act g32"] = small(32, True)
_, exes = bench.build_probes(tmp)
res = {}
exe = "/work/ggml-build/bin/test-backend-ops"
def triad(mib):
    p = subprocess.run([exes["triad"], str(th), "5", str(mib)], capture_output=True, text=True)
    return bench.parse_probe(p.stdout, "triad")[th]["best_gbs"]
for r in range(rounds):
    res.setdefault("triad 256MiB", []).append(triad(256))
    res.setdefault("triad 24MiB", []).append(triad(24))
    for name, m in (models.items() if r % 2 == 0 else reversed(list(models.items()))):
        rep = 2000 if name.startswith("L2") else 30
        x = bench.measure_blockc(m, 1, th, rep)
        res.setdefault(name, []).append(x["median_ms"] / 2)
        print(r, name, x["median_ms"] / 2, flush=True)
    t, cmd = G.ggml_times(exe, ["q4_0", "q4_K", "q8_0"], 1, th)
    for k, v in t.items():
        res.setdefault("ggml " + k, []).append(v / 1000)
    print(r, t, flush=True)
print(json.dumps(res, indent=1))
MK = 4096 * 14336
bpw = {"int4 g32": .625, "int4 g128": .53125, "int4+act g32": .625, "int4+act g128": .53125, "int8": 1.0,
       "ggml q4_0": 18/32, "ggml q4_K": 144/256, "ggml q8_0": 34/32}
for k, v in res.items():
    med = statistics.median(v)
    if k.startswith("triad"):
        print("%-16s %.1f GB/s  (%s)" % (k, med, v)); continue
    if k.startswith("L2"):
        print("%-16s %.4f ms per 1024x2048 projection, %.1f ps/weight/thread (%s)" % (k, med, med*1e9/(2048*1024)*th, ["%.4f"%a for a in v])); continue
    print("%-16s %.3f ms  %.3f B/w  %.1f GB/s  %.1f ps/weight/thread (%s)" % (k, med, bpw[k], MK*bpw[k]/med/1e6, med*1e9/MK*th, ["%.3f"%a for a in v]))
