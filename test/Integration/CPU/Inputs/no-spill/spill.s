# A hand-written innermost loop with 8 FMA accumulators and one spill: the
# checker must count it.
forward..omp_par:
.LBB0_1:                                # =>This Inner Loop Header: Depth=1
	vfmadd231ps	%zmm16, %zmm17, %zmm0
	vfmadd231ps	%zmm16, %zmm17, %zmm1
	vfmadd231ps	%zmm16, %zmm17, %zmm2
	vfmadd231ps	%zmm16, %zmm17, %zmm3
	vmovups	%zmm4, 64(%rsp)                 # 64-byte Spill
	vfmadd231ps	%zmm16, %zmm17, %zmm4
	vfmadd231ps	%zmm16, %zmm17, %zmm5
	vfmadd231ps	%zmm16, %zmm17, %zmm6
	vfmadd231ps	%zmm16, %zmm17, %zmm7
	jne	.LBB0_1
# %bb.2:
	vmovups	64(%rsp), %zmm4                 # 64-byte Reload
	retq
