"""Sequence helpers for the decode tests (axis 1 is the token axis).

  decode_feed.py feed X.npy Y.npy OUT.npy
      The sequence `blockc-run --decode=N` consumed: the prompt X [B, T, d]
      followed by the output rows Y[:, T-1 : T+N-1] that were fed back.
  decode_feed.py slice IN.npy BEGIN END OUT.npy
      Tokens [BEGIN, END) of IN.
"""
import sys

import numpy as np


def main(argv):
    if argv[1] == "feed":
        x, y = np.load(argv[2]), np.load(argv[3])
        t = x.shape[1]
        feed = np.concatenate([x, y[:, t - 1:-1]], axis=1)
        np.save(argv[4], feed.astype(np.float32))
    elif argv[1] == "slice":
        a = np.load(argv[2])
        np.save(argv[5], np.ascontiguousarray(a[:, int(argv[3]):int(argv[4])]))
    else:
        sys.exit("unknown command " + argv[1])


if __name__ == "__main__":
    main(sys.argv)
