"""Checks generated token ids (blockc-run --generate --output) for the
generation tests.

    generated_ids.py same A.npy B.npy [--margin-file F --min-margin M]
        A and B hold the same ids (shape and values); with a margin file
        (blockc_ref.py generate --min-margin-out), first that the
        reference's smallest top-two logit margin is above M, so that equal
        greedy tokens are a meaningful check and not luck of rounding.
    generated_ids.py differ A.npy B.npy
        A and B have the same shape but different ids.
    generated_ids.py encode TOKDIR PROMPT OUT.npy
        the ids utils/bpe_ref.py encodes PROMPT to, as int32 [1, T].
    generated_ids.py text TOKDIR GEN.npy STDOUT EOS
        the first line blockc-run printed (STDOUT) is the text that
        utils/bpe_ref.py decodes from GEN.npy's ids (up to and including an
        EOS id, which decodes to nothing).
"""

import os
import subprocess
import sys

import numpy as np


def load(path):
    a = np.load(path)
    if a.dtype != np.int32:
        sys.exit("%s: dtype %s, expected int32" % (path, a.dtype))
    return a


def main(argv):
    mode = argv[1]
    if mode in ("same", "differ"):
        a, b = load(argv[2]), load(argv[3])
        if a.shape != b.shape:
            sys.exit("shapes differ: %s %s vs %s %s"
                     % (argv[2], a.shape, argv[3], b.shape))
        equal = np.array_equal(a, b)
        if mode == "differ":
            if equal:
                sys.exit("the ids are the same, expected them to differ")
            print("differ: ok")
            return 0
        if "--margin-file" in argv:
            f = argv[argv.index("--margin-file") + 1]
            m = float(argv[argv.index("--min-margin") + 1])
            margin = float(open(f).read().split()[-1].split("=")[-1])
            if margin <= m:
                sys.exit("the reference's top-two margin %g is not above %g: "
                         "pick other seeds" % (margin, m))
        if not equal:
            where = np.argwhere(a != b)[0]
            sys.exit("ids differ first at %s: %d vs %d" % (
                tuple(where), a[tuple(where)], b[tuple(where)]))
        print("same: %s ok" % (a.shape,))
        return 0
    ref = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                       "..", "..", "utils", "bpe_ref.py")
    if mode == "encode":
        tok, prompt, out = argv[2:5]
        ids = subprocess.run([sys.executable, ref, "encode", tok, prompt],
                             capture_output=True, text=True,
                             check=True).stdout.strip()
        np.save(out, np.array([[int(t) for t in ids.split(",")]],
                              dtype=np.int32))
        return 0
    if mode == "text":
        tok, gen, stdout, eos = argv[2:6]
        ids = [int(t) for t in load(gen)[0]]
        if int(eos) in ids:
            ids = ids[:ids.index(int(eos)) + 1]
        text = subprocess.run(
            [sys.executable, ref, "decode", tok, ",".join(map(str, ids))],
            capture_output=True, text=True, check=True).stdout
        text = text[:-1] if text.endswith("\n") else text
        with open(stdout, encoding="utf-8") as f:
            printed = f.read().split("\n")[0]
        if printed != text:
            sys.exit("printed %r, the reference decodes %r" % (printed, text))
        print("text: ok (%d ids)" % len(ids))
        return 0
    sys.exit("unknown mode " + mode)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
