"""Inputs and checks of c-api-nvptx.test's C program (Inputs/c_api_nvptx.c).

  nvptx_io.py inputs DIR D       writes DIR/x0..x3.bin (4, 12, 16, 41 rows)
      and DIR/xf.bin (4 rows): float32 rows of width D, seeded;
  nvptx_io.py check DIR CONFIG WEIGHTS [--tol T]
      runs utils/blockc_ref.py on each sequence's whole input (the fork's:
      its parent's first 10 rows, then xf) and compares the program's
      DIR/y*.bin with it: max |y - reference| <= T x max |reference|.
"""

import argparse
import os
import subprocess
import sys

import numpy as np

REF = os.path.join(os.path.dirname(__file__), "..", "..", "..", "utils",
                   "blockc_ref.py")
ROWS = {"0": 4, "1": 12, "2": 16, "3": 41, "f": 4}


def rows(path, d):
    return np.fromfile(path, dtype="<f4").reshape(-1, d)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=("inputs", "check"))
    p.add_argument("dir")
    p.add_argument("args", nargs="*")
    p.add_argument("--tol", type=float, default=1e-5)
    opts = p.parse_args()
    if opts.mode == "inputs":
        d = int(opts.args[0])
        rng = np.random.default_rng(3)
        for name, n in ROWS.items():
            x = rng.uniform(-1, 1, size=(n, d)).astype("<f4")
            x.tofile(os.path.join(opts.dir, "x%s.bin" % name))
        return
    config, weights = opts.args
    d = rows(os.path.join(opts.dir, "x0.bin"), 1).size // ROWS["0"]
    x = {n: rows(os.path.join(opts.dir, "x%s.bin" % n), d) for n in ROWS}
    whole = dict(x)
    whole["f"] = np.concatenate([x["1"][:10], x["f"]])
    for name in ROWS:
        src = os.path.join(opts.dir, "s%s.npy" % name)
        dst = os.path.join(opts.dir, "r%s.npy" % name)
        np.save(src, whole[name])
        subprocess.run([sys.executable, REF, "run", "--config", config,
                        "--weights", weights, "--input", src, "-o", dst],
                       check=True, stdout=subprocess.DEVNULL)
        want = np.load(dst).reshape(-1, d)[-ROWS[name]:].astype(np.float64)
        got = rows(os.path.join(opts.dir, "y%s.bin" % name), d)
        if got.shape != want.shape:
            raise SystemExit("y%s: %s rows, the reference %s"
                             % (name, got.shape[0], want.shape[0]))
        scale = float(np.max(np.abs(want)))
        diff = float(np.max(np.abs(got - want)))
        if not diff <= opts.tol * scale:
            raise SystemExit("y%s: max |blockc - reference| = %.3e, more "
                             "than %.0e of the output scale %.3e"
                             % (name, diff, opts.tol, scale))
        print("PASS y%s: %d rows within %.0e of the reference's scale"
              % (name, got.shape[0], opts.tol))


if __name__ == "__main__":
    main()
