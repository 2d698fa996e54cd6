package kernel

import "math"

// rbfRow sets v_j = exp(−γ·‖a − b_j‖²) + plus from the inner products v_j = ⟨a, b_j⟩, the squared
// norms na = ‖a‖² and nb_j = ‖b_j‖², in one pass (Kernel.Row). ‖a − b_j‖² = na + nb_j − 2⟨a, b_j⟩
// is clamped at 0, which rounding can cross.
//
// The exponential is within about 2 ulp of math.Exp and about half its cost, which mattered:
// math.Exp's call and long chain of dependent operations took two thirds of a kernel SGD epoch.
// With x = (256q + j)·ln2/256 + r, |r| ≤ ln2/512: e^x = 2^q·2^(j/256)·e^r, where 2^q goes into
// the exponent bits, 2^(j/256) comes from a table and e^r from its Taylor polynomial of degree 4
// (truncated at r⁵/120 < 4e-17). Below −708, where e^x is subnormal, and for NaN, math.Exp
// takes over.
func rbfRow(v []float64, na float64, nb []float64, gamma, plus float64) {
	nb = nb[:len(v)]
	if !haveRBFKernel {
		rbfRowGo(v, na, nb, gamma, plus)
		return
	}
	// The vector kernel stops before a block of four with an argument below −708 (or NaN): that
	// block goes through the loop in Go, and the kernel resumes after it.
	args := [3][4]float64{{na, na, na, na}, {-gamma, -gamma, -gamma, -gamma}, {plus, plus, plus, plus}}
	n4 := len(v) &^ 3
	for j := 0; j < n4; j += 4 {
		j += rbfRow4(&v[j], &nb[j], n4-j, &args, &rbfConsts, &exp2Frac)
		if j < n4 {
			rbfRowGo(v[j:j+4], na, nb[j:j+4], gamma, plus)
		}
	}
	rbfRowGo(v[n4:], na, nb[n4:], gamma, plus)
}

// rbfRowGo is rbfRow one value at a time.
func rbfRowGo(v []float64, na float64, nb []float64, gamma, plus float64) {
	const (
		scale = 256 * math.Log2E
		round = 0x1.8p52                         // adding it rounds a float64 below 2⁵¹ to an integer
		hi    = 6.93147180369123816490e-01 / 256 // ln2/256 in 31 bits: q·hi is exact
		lo    = 1.90821492927058770002e-10 / 256 // ln2/256 − hi
	)
	nb = nb[:len(v)]
	for j, dot := range v {
		d2 := na + nb[j] - 2*dot
		if d2 < 0 { // not math.Max, whose special cases cost a fifth of a kernel SGD epoch
			d2 = 0
		}
		x := -gamma * d2
		if !(x >= -708) {
			v[j] = math.Exp(x) + plus
			continue
		}
		// The conversions keep each product rounded on its own (the Go spec lets a compiler fuse a
		// product with a sum, as it does for GOAMD64=v3), so that rbfRow4's values stay these.
		qf := (float64(x*scale) + round) - round
		q := int64(qf)
		r := (x - float64(qf*hi)) - float64(qf*lo)
		p := 1 + float64(r*(1+float64(r*(1.0/2+float64(r*(1.0/6+float64(r*(1.0/24))))))))
		v[j] = float64(math.Float64frombits(exp2Frac[q&255]+uint64(q>>8)<<52)*p) + plus
	}
}

// rbfConsts are rbfRowGo's constants as rbfRow4 reads them, each in four lanes: 2, scale, round,
// hi, lo, 1, 1/2, 1/6, 1/24, −708, and the masks 255 and ^255 of q's table index and exponent.
var rbfConsts = func() (c [12][4]uint64) {
	const (
		scale = 256 * math.Log2E
		round = 0x1.8p52
		hi    = 6.93147180369123816490e-01 / 256
		lo    = 1.90821492927058770002e-10 / 256
	)
	for i, x := range []float64{2, scale, round, hi, lo, 1, 1.0 / 2, 1.0 / 6, 1.0 / 24, -708} {
		c[i] = [4]uint64{math.Float64bits(x), math.Float64bits(x), math.Float64bits(x), math.Float64bits(x)}
	}
	c[10] = [4]uint64{255, 255, 255, 255}
	c[11] = [4]uint64{^uint64(255), ^uint64(255), ^uint64(255), ^uint64(255)}
	return c
}()

// exp2Frac holds the bits of 2^(j/256) for j = 0, …, 255, to whose exponent field rbfRow adds q.
var exp2Frac = func() (t [256]uint64) {
	for j := range t {
		t[j] = math.Float64bits(math.Exp2(float64(j) / 256))
	}
	return t
}()
