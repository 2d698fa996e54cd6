package gemm

import "math"

// Axpy adds a·x to dst (x at least as long as dst): one fused multiply–add per entry where the
// processor has FMA, a multiply and an add elsewhere.
func Axpy(dst []float64, a float64, x []float64) {
	n := len(dst)
	x = x[:n]
	if !haveFMA {
		for j, v := range x {
			dst[j] += a * v
		}
		return
	}
	v := n &^ 3
	if v > 0 {
		axpy1(&dst[0], &x[0], a, v)
	}
	for j := v; j < n; j++ {
		dst[j] = math.FMA(a, x[j], dst[j])
	}
}

// Axpy4 adds a[0]·x0 + a[1]·x1 + a[2]·x2 + a[3]·x3 to dst (each x at least as long as dst),
// accumulated in that order: one pass over dst for four rows, the combination of rows of W that a
// sparse row selects (package xmat's products).
func Axpy4(dst []float64, a *[4]float64, x0, x1, x2, x3 []float64) {
	n := len(dst)
	x0, x1, x2, x3 = x0[:n], x1[:n], x2[:n], x3[:n]
	if !haveFMA {
		for j := range dst {
			dst[j] += a[0]*x0[j] + a[1]*x1[j] + a[2]*x2[j] + a[3]*x3[j]
		}
		return
	}
	v := n &^ 3
	if v > 0 {
		rows := [4]*float64{&x0[0], &x1[0], &x2[0], &x3[0]}
		axpy4(&dst[0], &rows, a, v)
	}
	for j := v; j < n; j++ {
		dst[j] = math.FMA(a[3], x3[j], math.FMA(a[2], x2[j], math.FMA(a[1], x1[j], math.FMA(a[0], x0[j], dst[j]))))
	}
}
