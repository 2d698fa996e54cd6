package gemm

import "math"

// DotRows4 returns ⟨x_t, b⟩ for four rows x0…x3, each at least as long as b, reading b once for
// the four: the per-example scores of a group of examples that share one vector (package ridge's
// grouped Hessian). Where the processor has FMA the sums are fused and split over several
// accumulators, so they may differ from a sequential dot product in the last bits.
func DotRows4(x0, x1, x2, x3, b []float64) [4]float64 {
	n := len(b)
	x0, x1, x2, x3 = x0[:n], x1[:n], x2[:n], x3[:n]
	var out [4]float64
	if !haveFMA {
		for j, v := range b {
			out[0] += x0[j] * v
			out[1] += x1[j] * v
			out[2] += x2[j] * v
			out[3] += x3[j] * v
		}
		return out
	}
	v := n &^ 3
	if v > 0 {
		rows := [4]*float64{&x0[0], &x1[0], &x2[0], &x3[0]}
		dotRows4(&rows, &b[0], v, &out)
	}
	for j := v; j < n; j++ {
		out[0] = math.FMA(x0[j], b[j], out[0])
		out[1] = math.FMA(x1[j], b[j], out[1])
		out[2] = math.FMA(x2[j], b[j], out[2])
		out[3] = math.FMA(x3[j], b[j], out[3])
	}
	return out
}
