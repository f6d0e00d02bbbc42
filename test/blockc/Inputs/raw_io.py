"""Raw f32 files for the C program of emit-obj-c.test.

  raw_io.py export W.safetensors x.npy OUTDIR NAME...   writes x.bin and
      w<i>.bin for the tensors NAME... in that order (the entry point's
      argument order); NAME `llama` stands for the nine tensors of a
      Llama-style layer 0 in the order of a block's entry point;
  raw_io.py import RAW.bin B T D OUT.npy                 wraps a raw result.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                "utils"))
import blockc_ref  # noqa: E402

# A Llama-style layer 0 in the argument order of a block's entry point.
LLAMA = ["model.layers.0." + n for n in (
    "input_layernorm.weight", "self_attn.q_proj.weight",
    "self_attn.k_proj.weight", "self_attn.v_proj.weight",
    "self_attn.o_proj.weight", "post_attention_layernorm.weight",
    "mlp.gate_proj.weight", "mlp.up_proj.weight", "mlp.down_proj.weight")]


def main(argv):
    if argv[1] == "export":
        weights = blockc_ref.load_safetensors(argv[2])
        x = np.load(argv[3]).astype("<f4")
        out = argv[4]
        x.tofile(os.path.join(out, "x.bin"))
        names = LLAMA if argv[5:] == ["llama"] else argv[5:]
        for i, name in enumerate(names):
            weights[name].astype("<f4").tofile(os.path.join(out, "w%d.bin" % i))
    elif argv[1] == "import":
        b, t, d = (int(v) for v in argv[3:6])
        y = np.fromfile(argv[2], dtype="<f4").reshape(b, t, d)
        np.save(argv[6], y)
    else:
        raise SystemExit("usage: raw_io.py export|import ...")


if __name__ == "__main__":
    main(sys.argv)
