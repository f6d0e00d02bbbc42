#!/usr/bin/env python3
"""Checks of blockc-run's emulator profile (docs/GPUEmulator.md#profile).

  profile_check.py json FILE CHIP        the JSON has exactly the documented
                                         shape, for architecture CHIP
  profile_check.py flops REPORT TABLE    the table's total FLOPs agree with
                                         blockc --report --format=json within 1%
  profile_check.py grows SMALL LARGE     the bound grows with the shape
  profile_check.py cache SHORT LONG N    two decode steps' profiles: the
                                         longer cache's step reads exactly N
                                         more distinct bytes, all in one
                                         kernel (the attention's)
"""
import json
import sys

KERNEL_KEYS = {
    "name", "launches", "grid", "block", "flops", "tensor_flops",
    "global_requests", "global_sectors", "global_bytes", "unique_bytes",
    "shared_requests", "shared_wavefronts", "barriers", "registers",
    "spill_bytes", "occupancy", "bound_us", "limiter"}
LIMITERS = {"tensor", "fp32", "dram", "launch"}


def fail(message):
    print("profile_check: " + message)
    sys.exit(1)


def check_json(path, chip):
    with open(path) as f:
        p = json.load(f)
    if set(p) != {"chip", "kernels", "total"}:
        fail(f"top-level keys {sorted(p)}")
    if p["chip"] != chip:
        fail(f"chip {p['chip']}, expected {chip}")
    if set(p["total"]) != {"flops", "unique_bytes", "bound_us"}:
        fail(f"total keys {sorted(p['total'])}")
    if not p["kernels"]:
        fail("no kernels")
    bound = flops = unique = 0.0
    for k in p["kernels"]:
        if set(k) != KERNEL_KEYS:
            fail(f"kernel keys {sorted(set(k) ^ KERNEL_KEYS)} differ")
        if len(k["grid"]) != 3 or len(k["block"]) != 3:
            fail(f"{k['name']}: grid / block not [x, y, z]")
        if k["limiter"] not in LIMITERS:
            fail(f"{k['name']}: limiter {k['limiter']}")
        if k["launches"] < 1 or k["bound_us"] < 2.0 * k["launches"]:
            fail(f"{k['name']}: {k['launches']} launches, bound {k['bound_us']}")
        if k["tensor_flops"] > k["flops"]:
            fail(f"{k['name']}: tensor FLOPs exceed FLOPs")
        if k["global_requests"] and not (
                k["global_requests"] <= k["global_sectors"]
                <= 32 * k["global_requests"] + k["global_bytes"] / 32):
            fail(f"{k['name']}: {k['global_sectors']} sectors for "
                 f"{k['global_requests']} requests")
        if k["shared_wavefronts"] < k["shared_requests"]:
            fail(f"{k['name']}: fewer wavefronts than shared requests")
        if k["registers"] is not None and not 1 <= k["registers"] <= 255:
            fail(f"{k['name']}: {k['registers']} registers")
        if k["occupancy"] is not None and not 0 < k["occupancy"] <= 1:
            fail(f"{k['name']}: occupancy {k['occupancy']}")
        bound += k["bound_us"]
        flops += k["flops"]
        unique += k["unique_bytes"]
    for key, value in (("bound_us", bound), ("flops", flops),
                       ("unique_bytes", unique)):
        if abs(p["total"][key] - value) > 1e-6 * max(1.0, value):
            fail(f"total {key} {p['total'][key]} is not the kernels' {value}")
    print(f"profile json: {len(p['kernels'])} kernels, chip {p['chip']}, "
          f"registers {'known' if p['kernels'][0]['registers'] else 'unknown'}")


def table_total(path):
    with open(path) as f:
        for line in f:
            if line.startswith("total "):
                return [float(x) for x in line.split()[1:4]]
    fail(f"{path}: no total line")


def check_flops(report_path, table_path):
    with open(report_path) as f:
        r = json.load(f)
    totals = r["model_totals"]
    expected = (totals["static_flops_per_token"] +
                totals["attention_flops_per_token"]) * r["seq_len"]
    counted = table_total(table_path)[0]
    ratio = counted / expected
    if abs(ratio - 1) > 0.01:
        fail(f"counted {counted:.6g} FLOPs, the report {expected:.6g} "
             f"(ratio {ratio:.4f})")
    print("profile flops: within 1% of the report")


def check_grows(small, large):
    with open(small) as f:
        a = json.load(f)["total"]
    with open(large) as f:
        b = json.load(f)["total"]
    for key in ("flops", "unique_bytes", "bound_us"):
        if not b[key] > a[key]:
            fail(f"{key} does not grow: {a[key]} -> {b[key]}")
    print("profile grows with T")


def check_cache(short, long, extra):
    with open(short) as f:
        a = json.load(f)
    with open(long) as f:
        b = json.load(f)
    grown = b["total"]["unique_bytes"] - a["total"]["unique_bytes"]
    if grown != extra:
        fail(f"unique bytes grow by {grown}, not {extra}")
    names = [k["name"] for k in a["kernels"]]
    if names != [k["name"] for k in b["kernels"]]:
        fail("the two steps run different kernels")
    changed = [x["name"] for x, y in zip(a["kernels"], b["kernels"])
               if x["unique_bytes"] != y["unique_bytes"]]
    if len(changed) != 1:
        fail(f"{len(changed)} kernels read more, not one: {changed}")
    print(f"decode step reads {grown} more bytes in {changed[0]}")


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "json" and len(sys.argv) == 4:
        check_json(sys.argv[2], sys.argv[3])
    elif cmd == "flops" and len(sys.argv) == 4:
        check_flops(sys.argv[2], sys.argv[3])
    elif cmd == "grows" and len(sys.argv) == 4:
        check_grows(sys.argv[2], sys.argv[3])
    elif cmd == "cache" and len(sys.argv) == 5:
        check_cache(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        fail(__doc__)
