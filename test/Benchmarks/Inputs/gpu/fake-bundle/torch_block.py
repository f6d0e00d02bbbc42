"""Stands in for torch_block.py: its output lines, without torch."""
import sys

a = [x for x in sys.argv[1:] if x != "tf32"]
if a[0] == "check":
    print("check max_abs_err=0.03125 rms_err=0.00195312 scale=5.4 "
          "tol=0.0421875 rms_tol=0.0263672 non_finite=0 PASS")
elif a[0] == "block":
    for t in a[1:]:
        print("torch block T=%s: 2.000 ms, 100.0 TFLOP/s" % t)
elif a[0] == "peak":
    print("torch peak %s GEMM 8192^3: 1.400 ms, 785.4 TFLOP/s"
          % ("tf32" if sys.argv[-1] == "tf32" else "bf16"))
elif a[0] == "decode":
    for n in a[1:]:
        print("torch decode L=%s: %.3f ms" % (n, 0.241 if n == "512" else 1.03))
