"""The installed blockc package's forward pass:
python_forward.py MODEL.mlir WEIGHTS X.npy Y.npy"""
import sys

import numpy as np

import blockc

print(blockc.__file__)
model, weights, x, y = sys.argv[1:]
m = blockc.Model(model, weights=weights, isa="avx2")
out = m(np.load(x))
print("output", out.shape)
np.save(y, out)
