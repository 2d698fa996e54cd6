package ridge

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/kernel"
	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/space/spacetest"
	"gonum.org/v1/gonum/mat"
)

// pinvOf returns S⁺ of the enumerated covariance, from its eigenpairs above 1e-9 of the largest.
func pinvOf(t *testing.T, b *spacetest.Brute) *mat.Dense {
	t.Helper()
	d := len(b.Mean)
	vals, vecs := b.CovEigen(t)
	top := 0.0
	for _, v := range vals {
		top = math.Max(top, math.Abs(v))
	}
	P := mat.NewDense(d, d, nil)
	for k, v := range vals {
		if v <= 1e-9*top {
			continue
		}
		col := mat.Col(nil, k, vecs)
		for i := 0; i < d; i++ {
			for j := 0; j < d; j++ {
				P.Set(i, j, P.At(i, j)+col[i]*col[j]/v)
			}
		}
	}
	return P
}

// centred returns m̂ − p of one score row through the model's map (a copy of u).
func centred(mm *marginalMap, u []float64) []float64 {
	out := append([]float64(nil), u...)
	mm.centre(out, make([]float64, len(u)))
	return out
}

// The derivation of docs/design.md §2a, checked on every space and every structure y: the
// minimiser of the per-example loss ½[uᵀSu + (1 − δᵀu)²] is u* = S⁺δ/(1 + t), t = δᵀS⁺δ (its
// gradient S u − (1 − δᵀu)δ vanishes); S u* = δ/(1 + t) and u*ᵀS u* = t/(1 + t)²; and the map
// returns δ exactly when 1 ≤ t ≤ r, else δ·(1 + r)/(1 + t) (the cap), clipped.
func TestMarginalsInvertTheNoiseFreeOptimum(t *testing.T) {
	for _, sp := range everySpace(t) {
		name := sp.Kind()
		b := spacetest.Enumerate(t, sp)
		Sp := pinvOf(t, b)
		mm := newMarginalMap(sp, nil)
		d := sp.Dim()
		r := float64(space.CovRank(sp))
		exact := 0
		for yi, psi := range b.Psis {
			delta := make([]float64, d)
			for j := range delta {
				delta[j] = psi[j] - b.Mean[j]
			}
			sd := mat.NewVecDense(d, nil)
			sd.MulVec(Sp, mat.NewVecDense(d, delta))
			tt := mat.Dot(sd, mat.NewVecDense(d, delta))
			u := make([]float64, d)
			for j := range u {
				u[j] = sd.AtVec(j) / (1 + tt)
			}
			su := make([]float64, d)
			mm.cov.MulVec(su, u)
			var du, a float64
			for j := range u {
				du += delta[j] * u[j]
				a += u[j] * su[j]
			}
			for j := range u {
				if g := su[j] - (1-du)*delta[j]; math.Abs(g) > 1e-10 {
					t.Fatalf("%s y%d: the gradient at S⁺δ/(1+t) is %.3g in coordinate %d", name, yi, g, j)
				}
				if math.Abs(su[j]-delta[j]/(1+tt)) > 1e-10 {
					t.Fatalf("%s y%d: S u = %v, want δ/(1+t) = %v", name, yi, su[j], delta[j]/(1+tt))
				}
			}
			if math.Abs(a-tt/((1+tt)*(1+tt))) > 1e-12 {
				t.Fatalf("%s y%d: uᵀSu = %v, want t/(1+t)² = %v", name, yi, a, tt/((1+tt)*(1+tt)))
			}
			want := 1.0
			switch {
			case tt < 1e-12: // δ = 0: u = 0 and m̂ = p
			case tt < 1:
				t.Fatalf("%s y%d: t = %v < 1: the noise-free root is not t₊ (not expected in these spaces)", name, yi, tt)
			case tt > r*(1+1e-9):
				want = (1 + r) / (1 + tt)
			default:
				exact++
			}
			got := centred(mm, u)
			for j := range got {
				if w := want * delta[j]; math.Abs(got[j]-w) > 1e-9 {
					t.Fatalf("%s y%d (t = %.4g, r = %v): m̂ − p = %v, want %v", name, yi, tt, r, got, w)
				}
			}
		}
		if exact == 0 {
			t.Errorf("%s: no structure with 1 ≤ t ≤ r", name)
		}
	}
}

// scoreModel is a linear model whose scores on the rows of the q×q identity are the rows of U.
func scoreModel(sp space.Space, U []float64, q int) (*Model, []float64) {
	X := make([]float64, q*q)
	for i := 0; i < q; i++ {
		X[i*q+i] = 1
	}
	return &Model{Space: sp, Kernel: kernel.Kernel{Kind: kernel.Linear}, NFeatures: q,
		Coef: mat.NewDense(q, sp.Dim(), append([]float64(nil), U...))}, X
}

// A model fitted without noise (one-hot inputs, each input determining its structure, tiny α)
// returns ψ(y) as its marginals for every structure with t ≤ r, and decodes them back into y.
// With α = 1e-9 and 4 copies per input, u differs from the population optimum by about
// 2α/4 · ‖(S + δδᵀ)⁺‖ ≈ 1e-9 relative; the tolerance 1e-6 leaves room for the solver.
func TestMarginalsOfANoiseFreeFit(t *testing.T) {
	for _, sp := range everySpace(t) {
		name := sp.Kind()
		b := spacetest.Enumerate(t, sp)
		K := min(len(b.Ys), 12)
		const reps = 4
		m := K * reps
		w := sp.Width()
		X := make([]float64, m*K)
		ys := make([]int64, m*w)
		for i := 0; i < m; i++ {
			k := i % K
			X[i*K+k] = 1
			copy(ys[i*w:(i+1)*w], b.Ys[k*len(b.Ys)/K])
		}
		opt := baseOptions()
		opt.Alpha, opt.Intercept, opt.Solver = 1e-9, false, Exact
		model, err := Fit(sp, X, m, K, ys, nil, opt)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		d := sp.Dim()
		M := make([]float64, K*d)
		got := make([]int64, K*w)
		if err := model.Marginals(X[:K*K], K, K, M, got, EstimateLinear, ScaleNoiseFree, 1, nil); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		Sp := pinvOf(t, b)
		r := float64(space.CovRank(sp))
		checked := 0
		for k := 0; k < K; k++ {
			y := b.Ys[k*len(b.Ys)/K]
			psi := make([]float64, d)
			sp.Embed(y, psi)
			delta := mat.NewVecDense(d, nil)
			for j := range psi {
				delta.SetVec(j, psi[j]-b.Mean[j])
			}
			var sd mat.VecDense
			sd.MulVec(Sp, delta)
			if tt := mat.Dot(&sd, delta); tt > r+1e-9 {
				continue // the cap: checked at the optimum above
			}
			checked++
			for j := range psi {
				if math.Abs(M[k*d+j]-psi[j]) > 1e-6 {
					t.Fatalf("%s input %d: marginals %v, want ψ(y) = %v", name, k, M[k*d:(k+1)*d], psi)
				}
			}
			for j := 0; j < w; j++ {
				if got[k*w+j] != y[j] {
					t.Fatalf("%s input %d: decoded %v from the marginals, want %v", name, k, got[k*w:(k+1)*w], y)
				}
			}
		}
		if checked == 0 {
			t.Errorf("%s: none of the %d structures has t ≤ r", name, K)
		}
	}
}

// On random scores of every magnitude, the marginals are finite and in the range of ψ; the
// structures decoded from them maximise ⟨m̂ − p, ψ(y)⟩ over the enumerated Y (exact decoders), and
// asking for the marginals, the structures or both gives the same numbers.
func TestMarginalsDecodeAndRange(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, sp := range everySpace(t) {
		name := sp.Kind()
		b := spacetest.Enumerate(t, sp)
		d, w := sp.Dim(), sp.Width()
		lo, hi := space.CoordRange(sp)
		p := make([]float64, d)
		sp.Mean(p)
		const q = 30
		U := make([]float64, q*d)
		for i := 0; i < q; i++ {
			scale := math.Pow(10, float64(r.IntN(13)-6)) // 1e-6 … 1e6
			if i < 2 {
				scale = []float64{1e-300, 1e300}[i]
			}
			for j := 0; j < d; j++ {
				U[i*d+j] = scale * r.NormFloat64()
			}
		}
		model, X := scoreModel(sp, U, q)
		M := make([]float64, q*d)
		ys := make([]int64, q*w)
		if err := model.Marginals(X, q, q, M, ys, EstimateLinear, ScaleNoiseFree, 1, nil); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		M2 := make([]float64, q*d)
		ys2 := make([]int64, q*w)
		if err := model.Marginals(X, q, q, M2, nil, EstimateLinear, ScaleNoiseFree, 1, nil); err != nil {
			t.Fatal(err)
		}
		if err := model.Marginals(X, q, q, nil, ys2, EstimateLinear, ScaleNoiseFree, 1, nil); err != nil {
			t.Fatal(err)
		}
		for i, v := range M {
			if math.IsNaN(v) || v < lo || v > hi {
				t.Fatalf("%s: marginal %v outside [%v, %v]", name, v, lo, hi)
			}
			if v != M2[i] {
				t.Fatalf("%s: marginals differ with and without structures", name)
			}
		}
		for i := range ys {
			if ys[i] != ys2[i] {
				t.Fatalf("%s: structures differ with and without marginals", name)
			}
		}
		if sp.Guarantee() != 0 {
			continue
		}
		for i := 0; i < q; i++ {
			c := make([]float64, d)
			for j := range c {
				c[j] = M[i*d+j] - p[j]
			}
			best := math.Inf(-1)
			for _, psi := range b.Psis {
				best = math.Max(best, floatsDot(c, psi))
			}
			psi := make([]float64, d)
			sp.Embed(ys[i*w:(i+1)*w], psi)
			if f := floatsDot(c, psi); f < best-1e-12*math.Max(1, math.Abs(best)) {
				t.Fatalf("%s row %d: decoded ⟨m̂ − p, ψ⟩ = %v, the maximum over Y is %v", name, i, f, best)
			}
		}
		// The largest scores saturate every coordinate that S u moves: at an end of the range.
		// The coordinates the space holds constant stay at p (S's row is 0 there: the operator's
		// rounding, at these scores 1.5e284 on a root, is not a score).
		su := make([]float64, d)
		model.Space.Covariance().MulVec(su, U[d:2*d])
		constant := constantMask(model.Space)
		for j, s := range su {
			switch v := M[d+j]; {
			case constant[j] && v != p[j]:
				t.Fatalf("%s: scores of 1e300: constant coordinate %d has marginal %v, not p = %v", name, j, v, p[j])
			case constant[j]:
			case s > 0 && v != hi, s < 0 && v != lo:
				t.Fatalf("%s: scores of 1e300: marginal %v with (S u)_%d = %v", name, v, j, s)
			}
		}
	}
}

// constantMask marks the coordinates of ψ that the space's uniform measure holds constant (a
// root node).
func constantMask(sp space.Space) []bool {
	out := make([]bool, sp.Dim())
	for _, j := range constantCoords(sp.Covariance(), sp.Dim()) {
		out[j] = true
	}
	return out
}

func floatsDot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func TestMarginalsArguments(t *testing.T) {
	sp, _ := space.NewMultilabel(3)
	model, X := scoreModel(sp, []float64{1, -1, 0.5, 0, 0, 0}, 2)
	if err := model.Marginals(X, 2, 2, nil, nil, EstimateLinear, ScaleNoiseFree, 1, nil); err == nil {
		t.Error("no output: want an error")
	}
	if err := model.Marginals(X, 2, 2, make([]float64, 5), nil, EstimateLinear, ScaleNoiseFree, 1, nil); err == nil {
		t.Error("short marginals output: want an error")
	}
	if err := model.Marginals(X, 2, 2, nil, make([]int64, 5), EstimateLinear, ScaleNoiseFree, 1, nil); err == nil {
		t.Error("short structures output: want an error")
	}
	if err := model.Marginals(X[:3], 2, 2, make([]float64, 6), nil, EstimateLinear, ScaleNoiseFree, 1, nil); err == nil {
		t.Error("short X: want an error")
	}
	if err := model.Marginals(X, 2, 3, make([]float64, 6), nil, EstimateLinear, ScaleNoiseFree, 1, nil); err == nil {
		t.Error("X with the wrong number of features: want an error")
	}
	stop := new(cancel.Flag)
	stop.Stop()
	for _, M := range [][]float64{make([]float64, 6), nil} {
		if err := model.Marginals(X, 2, 2, M, make([]int64, 6), EstimateLinear, ScaleNoiseFree, 1, stop); !errors.Is(err, ErrCancelled) {
			t.Errorf("stopped call: got %v, want ErrCancelled", err)
		}
	}
	for _, f := range []float64{0, -1, math.NaN(), math.Inf(1), 2 * MaxScaleFactor} {
		if err := model.Marginals(X, 2, 2, make([]float64, 6), nil, EstimateLinear, ScaleUnit, f, nil); err == nil || !strings.Contains(err.Error(), "factor") {
			t.Errorf("factor %v: got %v, want an error naming the factor", f, err)
		}
	}
	// u = 0 gives p; the zero vector stays the mean.
	M := make([]float64, 6)
	if err := model.Marginals(X, 2, 2, M, nil, EstimateLinear, ScaleNoiseFree, 1, nil); err != nil {
		t.Fatal(err)
	}
	for j := 3; j < 6; j++ {
		if M[j] != 0.5 {
			t.Errorf("zero scores: marginals %v, want p = 0.5", M[3:])
		}
	}
}

// A factor multiplies the scale before clipping: with ScaleUnit, m̂ = clip(p + f·S u) for every f,
// and with ScaleNoiseFree the unclipped estimates scale by f.
func TestMarginalsScaleFactor(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, sp := range everySpace(t) {
		d := sp.Dim()
		lo, hi := space.CoordRange(sp)
		p := make([]float64, d)
		sp.Mean(p)
		const q = 6
		U := make([]float64, q*d)
		for i := range U {
			U[i] = 0.01 * r.NormFloat64()
		}
		model, X := scoreModel(sp, U, q)
		for _, f := range []float64{0.25, 1, 4, 1e6} {
			M := make([]float64, q*d)
			if err := model.Marginals(X, q, q, M, nil, EstimateLinear, ScaleUnit, f, nil); err != nil {
				t.Fatal(err)
			}
			su := make([]float64, d)
			constant := constantMask(sp)
			for i := 0; i < q; i++ {
				sp.Covariance().MulVec(su, U[i*d:(i+1)*d])
				for j := range su {
					if constant[j] {
						su[j] = 0 // S's row, in exact arithmetic
					}
					want := math.Min(math.Max(p[j]+f*su[j], lo), hi)
					if g := M[i*d+j]; math.Abs(g-want) > 1e-12*math.Max(1, math.Abs(want)) {
						t.Fatalf("%s factor %g row %d coordinate %d: %v, want clip(p + f·S u) = %v", sp.Kind(), f, i, j, g, want)
					}
				}
			}
		}
	}
}
