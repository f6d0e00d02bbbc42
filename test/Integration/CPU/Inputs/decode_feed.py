"""Sequence helpers for the decode tests (axis 1 is the token axis).

  decode_feed.py feed X.npy Y.npy OUT.npy
      The sequence `blockc-run --decode=N` consumed: the prompt X [B, T, d]
      followed by the output rows Y[:, T-1 : T+N-1] that were fed back.
  decode_feed.py slice IN.npy BEGIN END OUT.npy
      Tokens [BEGIN, END) of IN.
  decode_feed.py greedy IDS.npy LOGITS.npy OUT_IDS.npy [REF_TOKENS.npy]
      A causal language model's greedy decode (`blockc-run --decode=N`):
      the ids it consumed, the prompt IDS [B, T] then the N generated
      tokens (the arg max of the logits [B, T + N, vocab] at positions
      T-1 .. T+N-2), as int32; with REF_TOKENS ([B, N], the reference's
      `generate`), fails unless the generated tokens equal them.
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
    elif argv[1] == "greedy":
        ids, logits = np.load(argv[2]), np.load(argv[3])
        t = ids.shape[1]
        tokens = logits[:, t - 1:-1].argmax(axis=-1).astype(np.int32)
        np.save(argv[4], np.concatenate([ids.astype(np.int32), tokens],
                                        axis=1))
        if len(argv) > 5:
            ref = np.load(argv[5])
            if ref.shape != tokens.shape or (ref != tokens).any():
                sys.exit("generated tokens differ:\n%s\nreference:\n%s"
                         % (tokens, ref))
            print("greedy tokens equal (%d x %d)" % tokens.shape)
    else:
        sys.exit("unknown command " + argv[1])


if __name__ == "__main__":
    main(sys.argv)
