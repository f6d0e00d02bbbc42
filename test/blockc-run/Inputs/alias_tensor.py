"""Writes a copy of a safetensors file whose tensor NAME points at the bytes
of tensor OTHER (same size), i.e. two tensors overlap.

  alias_tensor.py IN OUT NAME OTHER
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                "utils"))
import blockc_ref  # noqa: E402

src, dst, name, other = sys.argv[1:5]
header, data = blockc_ref._split_safetensors(src)
header[name]["data_offsets"] = list(header[other]["data_offsets"])
with open(dst, "wb") as f:
    f.write(blockc_ref._pack_header(header) + data)
