#!/usr/bin/env python3
"""Merges measured per-kernel GPU times with the emulator's bounds.

  profile_merge.py [--bound BOUND.txt] --measured MEASURED.json [--calls N]
                   [--json OUT.json] [--markdown OUT.md]

BOUND.txt is the table that `blockc-run M -target=nvptx --emulate --profile`
prints (any lines before it are skipped): a header line whose first word is
`kernel`, with whitespace-separated column names (at least kernel, launches
and bound_us; limiter when there is one), one row per kernel with as many
values (`-` for none), and a line starting with `total` that gives flops,
unique_bytes and bound_us, either as three values in that order or as
name=value words. Its launches and bound_us are per call of the block.

MEASURED.json is what the CUDA runtime's blockcCudaProfileWriteJSON wrote
(docs/RuntimeABI.md): {"kernels": [{"name", "launches", "measured_us"}],
"total_us"}, summed over N profiled calls of the block (--calls, default 1;
block_gpu.c profiles REPEAT calls).

Kernels are matched by name. The merged table has one row per kernel,
in name order with numbers compared as numbers (forward_kernel_2 before
forward_kernel_10): launches per call, measured_us per call (the measured sum
divided by N), bound_us, measured / bound and the limiter, and a total row.
A kernel found on one side only has no ratio and a note; so has a kernel
whose measured launches are not N times its launches per call. Without
--bound, the table has the measured times only. Writes the
table as JSON (--json) and as Markdown (--markdown); without either, prints
the Markdown. Standard library only: it runs here (lit) and on the GPU
machine (benchmarks/gpu/run.sh through results.py).
"""

import argparse
import json
import re
import sys


class MergeError(Exception):
    pass


REQUIRED_COLUMNS = ("kernel", "launches", "bound_us")
TOTAL_FIELDS = ("flops", "unique_bytes", "bound_us")
INT = re.compile(r"^-?\d+$")


def value(text):
    """A table cell: None for '-', an int, a float, or the text itself
    (grid and block such as 64x32x1, the limiter)."""
    if text == "-":
        return None
    if INT.match(text):
        return int(text)
    try:
        return float(text)
    except ValueError:
        return text


def number(v, what):
    if v is None:
        return None
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return v
    raise MergeError("%s is %r, not a number" % (what, v))


def parse_bound(text, source="bound table"):
    """{"columns": [...], "kernels": {name: {column: value}}, "total":
    {flops, unique_bytes, bound_us}} from the emulator's profile output."""
    lines = text.splitlines()
    start = None
    for i, line in enumerate(lines):
        words = line.split()
        if words and words[0] == "kernel" and "bound_us" in words:
            start = i
            break
    if start is None:
        raise MergeError("%s: no header line starting with 'kernel' and "
                         "naming bound_us" % source)
    columns = lines[start].split()
    for c in REQUIRED_COLUMNS:
        if c not in columns:
            raise MergeError("%s:%d: the header has no column %r"
                             % (source, start + 1, c))
    if len(set(columns)) != len(columns):
        raise MergeError("%s:%d: repeated column names" % (source, start + 1))
    kernels = {}
    total = None
    for number_, line in enumerate(lines[start + 1:], start + 2):
        words = line.split()
        if not words or re.match(r"^[-=|+ ]+$", line):
            continue
        if words[0] == "total":
            total = parse_total(words[1:], "%s:%d" % (source, number_))
            break
        if len(words) != len(columns):
            raise MergeError("%s:%d: %d values for %d columns"
                             % (source, number_, len(words), len(columns)))
        row = {c: value(w) for c, w in zip(columns, words)}
        row["kernel"] = words[columns.index("kernel")]
        if row["kernel"] in kernels:
            raise MergeError("%s:%d: kernel %s appears twice"
                             % (source, number_, row["kernel"]))
        number(row["launches"], "%s:%d: launches" % (source, number_))
        number(row["bound_us"], "%s:%d: bound_us" % (source, number_))
        kernels[row["kernel"]] = row
    if total is None:
        raise MergeError("%s: no line starting with 'total' after the table"
                         % source)
    return {"columns": columns, "kernels": kernels, "total": total}


def parse_total(words, where):
    if words and all("=" in w for w in words):
        pairs = dict(w.split("=", 1) for w in words)
    elif len(words) == len(TOTAL_FIELDS):
        pairs = dict(zip(TOTAL_FIELDS, words))
    elif (len(words) == 2 * len(TOTAL_FIELDS)
          and words[0::2] == list(TOTAL_FIELDS)):
        pairs = dict(zip(words[0::2], words[1::2]))
    else:
        raise MergeError("%s: expected 'total FLOPS UNIQUE_BYTES BOUND_US' "
                         "or name=value words, got %r"
                         % (where, " ".join(words)))
    if "bound_us" not in pairs:
        raise MergeError("%s: the total gives no bound_us" % where)
    total = {}
    for name in TOTAL_FIELDS:
        if name in pairs:
            total[name] = number(value(pairs[name]), "%s: %s" % (where, name))
    return total


def parse_measured(data, source="measured profile"):
    if not isinstance(data, dict) or not isinstance(data.get("kernels"), list):
        raise MergeError("%s: expected {\"kernels\": [...], \"total_us\": T}"
                         % source)
    kernels = {}
    for k in data["kernels"]:
        if not isinstance(k, dict) or not {"name", "launches",
                                           "measured_us"} <= set(k):
            raise MergeError("%s: a kernel entry without name, launches and "
                             "measured_us: %r" % (source, k))
        number(k["launches"], "%s: launches of %s" % (source, k["name"]))
        number(k["measured_us"], "%s: measured_us of %s" % (source, k["name"]))
        kernels[k["name"]] = k
    total = number(data.get("total_us"), "%s: total_us" % source)
    if total is None:
        total = sum(k["measured_us"] for k in kernels.values())
    return {"kernels": kernels, "total_us": total}


def natural(name):
    """Sort key: numbers in names compare as numbers (forward_kernel_2
    before forward_kernel_10, as blockc numbers its kernels)."""
    return [(0, int(p), "") if p.isdigit() else (1, 0, p)
            for p in re.split(r"(\d+)", name) if p]


def rounded(v, digits=3):
    return None if v is None else round(float(v), digits)


def merge(bound, measured, calls=1):
    """The merged table as a JSON-able dict. `bound` may be None (measured
    times only: no bound, ratio or limiter)."""
    if calls < 1:
        raise MergeError("--calls must be at least 1")
    bk = bound["kernels"] if bound else {}
    mk = measured["kernels"]
    rows = []
    for name in sorted(set(bk) | set(mk), key=natural):
        b, m = bk.get(name), mk.get(name)
        notes = []
        launches = b["launches"] if b else None
        measured_us = m["measured_us"] / calls if m else None
        if m and b is None:
            launches = m["launches"] / calls
            if launches == int(launches):
                launches = int(launches)
            if bound:
                notes.append("not in the bound table")
        if b and m is None:
            notes.append("not measured")
        if b and m and b["launches"] is not None \
                and m["launches"] != b["launches"] * calls:
            notes.append("%s launches measured over %d calls, %s per call "
                         "bound" % (m["launches"], calls, b["launches"]))
        bound_us = b["bound_us"] if b else None
        ratio = (measured_us / bound_us
                 if measured_us is not None and bound_us else None)
        rows.append({
            "name": name,
            "launches": launches,
            "measured_us": rounded(measured_us),
            "bound_us": rounded(bound_us),
            "ratio": rounded(ratio),
            "limiter": b.get("limiter") if b else None,
            "note": "; ".join(notes) if notes else None,
        })
    total_measured = measured["total_us"] / calls
    total_bound = bound["total"].get("bound_us") if bound else None
    total = {
        "measured_us": rounded(total_measured),
        "bound_us": rounded(total_bound),
        "ratio": rounded(total_measured / total_bound
                         if total_bound else None),
    }
    if bound:
        for name in ("flops", "unique_bytes"):
            if name in bound["total"]:
                total[name] = bound["total"][name]
    return {"calls": calls, "kernels": rows, "total": total}


def cell(v, fmt="%s"):
    return "-" if v is None else fmt % v


def markdown(merged):
    """The merged table in Markdown, notes below it."""
    out = ["| kernel | launches | measured us | bound us | measured / bound "
           "| limiter |", "|---|---|---|---|---|---|"]
    notes = []
    for r in merged["kernels"]:
        out.append("| %s | %s | %s | %s | %s | %s |" % (
            r["name"], cell(r["launches"]), cell(r["measured_us"], "%.3f"),
            cell(r["bound_us"], "%.3f"), cell(r["ratio"], "%.2fx"),
            cell(r["limiter"])))
        if r["note"]:
            notes.append("* %s: %s" % (r["name"], r["note"]))
    t = merged["total"]
    out.append("| total | | %s | %s | %s | |" % (
        cell(t["measured_us"], "%.3f"), cell(t["bound_us"], "%.3f"),
        cell(t["ratio"], "%.2fx")))
    out.append("")
    out.append("Times in microseconds per call of the block (measured: the "
               "mean over %d profiled calls)." % merged["calls"])
    if notes:
        out.append("")
        out.extend(notes)
    return "\n".join(out) + "\n"


def merge_files(bound_path, measured_path, calls):
    bound = None
    if bound_path:
        with open(bound_path, encoding="utf-8") as f:
            bound = parse_bound(f.read(), bound_path)
    with open(measured_path, encoding="utf-8") as f:
        try:
            data = json.load(f)
        except ValueError as e:
            raise MergeError("%s: not JSON: %s" % (measured_path, e))
    return merge(bound, parse_measured(data, measured_path), calls)


def main(argv):
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bound", help="the emulator's profile table (text)")
    p.add_argument("--measured", required=True,
                   help="blockcCudaProfileWriteJSON's output")
    p.add_argument("--calls", type=int, default=1,
                   help="profiled calls of the block in MEASURED (default 1)")
    p.add_argument("--json", help="write the merged table as JSON")
    p.add_argument("--markdown", help="write the merged table as Markdown")
    args = p.parse_args(argv[1:])
    try:
        merged = merge_files(args.bound, args.measured, args.calls)
    except (MergeError, OSError) as e:
        print("profile_merge: %s" % e, file=sys.stderr)
        return 1
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(merged, f, indent=1)
            f.write("\n")
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as f:
            f.write(markdown(merged))
    if not args.json and not args.markdown:
        sys.stdout.write(markdown(merged))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
