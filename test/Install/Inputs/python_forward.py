"""The installed blockc package's forward pass:
python_forward.py MODEL.mlir WEIGHTS X.npy Y.npy [nvptx-emulated]
With nvptx-emulated, the NVPTX entry on the GPU emulator, and the path of
the emulator runtime the library loaded."""
import sys

import numpy as np

import blockc

print(blockc.__file__)
model, weights, x, y = sys.argv[1:5]
if sys.argv[5:] == ["nvptx-emulated"]:
    m = blockc.Model(model, weights=weights, target="nvptx", emulate=True)
else:
    m = blockc.Model(model, weights=weights, isa="avx2")
out = m(np.load(x))
with open("/proc/self/maps") as maps:
    for path in sorted({line.split()[-1] for line in maps
                        if "libblockc_emulator_runtime" in line}):
        print("emulator runtime", path)
print("output", out.shape)
np.save(y, out)
