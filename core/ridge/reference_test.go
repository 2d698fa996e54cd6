package ridge

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/mat"
)

// With a reference measure μ = (1 − w)·uniform + w·empirical, the loss must be the expected Taylor
// loss over z ~ μ, computed here by brute force: every structure of Y with mass (1 − w)/|Y| and
// every training structure with mass w·s_j/Σs. lossGrad returns ½ Σ s_i [uᵀSu + (1 − δᵀu)²] =
// Σ s_i (E_μ[a + a²/2] + ½), a = ⟨u_i, ψ(z) − ψ(y_i)⟩.
func TestReferenceLossIsExpectedTaylorLoss(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for _, sp := range referenceSpaces(t) {
		const m = 7
		_, ys := synthetic(t, sp, m, 2, 5)
		s := weights(r, m)
		d, wd := sp.Dim(), sp.Width()
		all := embedAll(t, sp)
		train := make([][]float64, m)
		var sum float64
		for i := range train {
			train[i] = embedOf(sp, ys[i*wd:(i+1)*wd])
			sum += s[i]
		}
		for _, w := range []float64{0, 0.3, 1} {
			p, err := NewProblem(sp, ys, m, s, 1)
			if err != nil {
				t.Fatal(err)
			}
			if err := p.useReference(sp, Empirical, w); err != nil {
				t.Fatal(err)
			}
			U := mat.NewDense(m, d, nil)
			for i := range U.RawMatrix().Data {
				U.RawMatrix().Data[i] = r.NormFloat64()
			}
			got := p.lossGrad(U, nil)
			var want float64
			for i := 0; i < m; i++ {
				u := U.RawRowView(i)
				taylor := func(z []float64) float64 {
					var a float64
					for c := range u {
						a += u[c] * (z[c] - train[i][c])
					}
					return a + a*a/2
				}
				var e float64
				for _, z := range all {
					e += (1 - w) / float64(len(all)) * taylor(z)
				}
				for j, z := range train {
					e += w * s[j] / sum * taylor(z)
				}
				want += s[i] * (e + 0.5)
			}
			if math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
				t.Errorf("%s, w = %v: loss %v, brute force over μ %v", sp.Kind(), w, got, want)
			}
		}
	}
}

// productProb is the probability of the structure with embedding z under the space's measure with
// mean pd (space.MarginalMeasure), written out per space from its definition.
func productProb(t *testing.T, kind string, params []int64, pd, z []float64) float64 {
	t.Helper()
	switch kind {
	case "multilabel":
		pr := 1.0
		for a, v := range z {
			if v == 1 {
				pr *= pd[a]
			} else {
				pr *= 1 - pd[a]
			}
		}
		return pr
	case "multiclass":
		for a, v := range z {
			if v == 1 {
				return pd[a]
			}
		}
	case "hierarchy_paths", "subtrees":
		parent := params
		if kind == "hierarchy_paths" {
			parent = params[1:]
		}
		if kind == "hierarchy_paths" { // z = v, the deepest node on the path: p_v minus its children's
			for v := range z {
				if z[v] == 0 {
					continue
				}
				deepest, stop := true, pd[v]
				for c, pc := range parent {
					if pc == int64(v) {
						if z[c] == 1 {
							deepest = false
						}
						stop -= pd[c]
					}
				}
				if deepest {
					return stop
				}
			}
		}
		pr := 1.0 // each child of an included node joins with q_c = p_c/p_parent
		for c, pc := range parent {
			if pc < 0 || z[pc] == 0 {
				continue
			}
			q := pd[c] / pd[pc]
			if z[c] == 1 {
				pr *= q
			} else {
				pr *= 1 - q
			}
		}
		return pr
	}
	t.Fatalf("no product measure written for %s", kind)
	return 0
}

// The product reference measure: (1 − w)·uniform + w·P, P the space's measure with the training
// structures' mean. By enumeration: P is a probability measure with that mean, and the loss is the
// expected Taylor loss over the mixture.
func TestProductReferenceLossIsExpectedTaylorLoss(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 34))
	for _, tc := range productCases(t) {
		sp := tc.sp
		const m = 9
		_, ys := synthetic(t, sp, m, 2, 6)
		s := weights(r, m)
		d, wd := sp.Dim(), sp.Width()
		all := embedAll(t, sp)
		pd := make([]float64, d)
		var sum float64
		train := make([][]float64, m)
		for i := range train {
			train[i] = embedOf(sp, ys[i*wd:(i+1)*wd])
			sum += s[i]
			for a, v := range train[i] {
				pd[a] += s[i] * v
			}
		}
		for a := range pd {
			pd[a] /= sum
		}
		prob := make([]float64, len(all))
		var total float64
		mean := make([]float64, d)
		for k, z := range all {
			prob[k] = productProb(t, tc.kind, tc.params, pd, z)
			total += prob[k]
			for a, v := range z {
				mean[a] += prob[k] * v
			}
		}
		if math.Abs(total-1) > 1e-12 {
			t.Fatalf("%s %v: the product measure has mass %v", tc.kind, tc.params, total)
		}
		for a := range mean {
			if math.Abs(mean[a]-pd[a]) > 1e-12 {
				t.Fatalf("%s %v: the product measure's mean %v, the training mean %v", tc.kind, tc.params, mean, pd)
			}
		}
		for _, w := range []float64{0.4, 1} {
			p, err := NewProblem(sp, ys, m, s, 1)
			if err != nil {
				t.Fatal(err)
			}
			if err := p.useReference(sp, Product, w); err != nil {
				t.Fatal(err)
			}
			U := mat.NewDense(m, d, nil)
			for i := range U.RawMatrix().Data {
				U.RawMatrix().Data[i] = r.NormFloat64()
			}
			got := p.lossGrad(U, nil)
			var want float64
			for i := 0; i < m; i++ {
				u := U.RawRowView(i)
				var e float64
				for k, z := range all {
					var a float64
					for c := range u {
						a += u[c] * (z[c] - train[i][c])
					}
					e += ((1-w)/float64(len(all)) + w*prob[k]) * (a + a*a/2)
				}
				want += s[i] * (e + 0.5)
			}
			if math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
				t.Errorf("%s %v, w = %v: loss %v, brute force over μ %v", tc.kind, tc.params, w, got, want)
			}
		}
	}
	// spaces without the measure refuse it by name
	sp, _ := space.New("permutations", []int64{4})
	_, ys := synthetic(t, sp, 5, 2, 3)
	p, err := NewProblem(sp, ys, 5, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.useReference(sp, Product, 0.5); err == nil || !strings.Contains(err.Error(), "permutations") {
		t.Errorf("product reference on permutations: %v", err)
	}
}

// partial_fit with an empirical reference keeps the measure of every example seen, so that two
// chunks give Fit on both; a chunk alone gives another model.
func TestPartialFitEmpiricalEqualsFit(t *testing.T) {
	sp, _ := space.New("multilabel", []int64{4})
	const m, n = 40, 3
	X, ys := synthetic(t, sp, m, n, 8)
	w := weights(rand.New(rand.NewPCG(1, 2)), m)
	opt := baseOptions()
	opt.Solver, opt.EmpiricalWeight = Exact, 0.6
	full, err := Fit(sp, X, m, n, ys, w, opt)
	if err != nil {
		t.Fatal(err)
	}
	h, wd := 15, sp.Width()
	first, err := PartialFit(nil, sp, X[:h*n], h, n, ys[:h*wd], w[:h], opt)
	if err != nil {
		t.Fatal(err)
	}
	both, err := PartialFit(first, sp, X[h*n:], m-h, n, ys[h*wd:], w[h:], opt)
	if err != nil {
		t.Fatal(err)
	}
	if e := relDiff(both.Coef, full.Coef); e > 1e-10 {
		t.Errorf("partial_fit in two chunks differs from fit by %.2e", e)
	}
	if e := relDiff(first.Coef, full.Coef); e < 1e-3 {
		t.Errorf("the first chunk alone matches the full fit (%.2e): the test cannot tell", e)
	}
	uniform := opt
	uniform.EmpiricalWeight = 0
	other, err := Fit(sp, X, m, n, ys, w, uniform)
	if err != nil {
		t.Fatal(err)
	}
	if e := relDiff(other.Coef, full.Coef); e < 1e-3 {
		t.Errorf("the uniform reference gives the same model (%.2e): the option does nothing", e)
	}
	// the CG solver reaches the same optimum from the Problem's own reference
	cg := opt
	cg.Solver = CG
	viaCG, err := Fit(sp, X, m, n, ys, w, cg)
	if err != nil {
		t.Fatal(err)
	}
	if e := relDiff(viaCG.Coef, full.Coef); e > 1e-6 {
		t.Errorf("CG and the exact solver differ by %.2e with an empirical reference", e)
	}
	sgd := opt
	sgd.Solver = SGD
	if _, err := PartialFit(nil, sp, X, m, n, ys, w, sgd); err == nil {
		t.Error("partial_fit by SGD with an empirical reference was accepted")
	}
}

// Without noise, a rich model's marginal estimates under the empirical reference follow design.md
// §2a with that measure's p, S and rank r: m̂ = p + δ·min(1 + t, 1 + r)/(1 + t), t = δᵀS⁺δ, which
// is ψ(y) itself when t ≤ r (here the training structures have t above and below r).
func TestEmpiricalMarginalsRecoverTargets(t *testing.T) {
	sp, _ := space.New("multilabel", []int64{3})
	const k = 5 // one-hot inputs, one per structure
	ys := []int64{1, 0, 0, 1, 1, 0, 0, 0, 1, 1, 1, 1, 0, 1, 0}
	X := make([]float64, k*k)
	for i := 0; i < k; i++ {
		X[i*k+i] = 1
	}
	opt := baseOptions()
	opt.Alpha, opt.Intercept, opt.Solver, opt.EmpiricalWeight = 1e-9, false, Exact, 1
	md, err := Fit(sp, X, k, k, ys, nil, opt)
	if err != nil {
		t.Fatal(err)
	}
	if md.ref == nil || md.ref.rank != 3 {
		t.Fatalf("reference %+v, want the empirical measure of rank 3", md.ref)
	}
	var es mat.EigenSym
	if !es.Factorize(md.ref.cov, true) {
		t.Fatal("eigendecomposition failed")
	}
	var vecs mat.Dense
	es.VectorsTo(&vecs)
	vals := es.Values(nil)
	M := make([]float64, k*3)
	if err := md.Marginals(X, k, k, M, nil, EstimateLinear, ScaleNoiseFree, 1, nil); err != nil {
		t.Fatal(err)
	}
	exact := 0
	for i := 0; i < k; i++ {
		delta := make([]float64, 3)
		for a := range delta {
			delta[a] = float64(ys[i*3+a]) - md.ref.mean[a]
		}
		var tt float64 // δᵀS⁺δ
		for e, v := range vals {
			if v > 1e-10 {
				proj := mat.Dot(vecs.ColView(e), mat.NewVecDense(3, delta))
				tt += proj * proj / v
			}
		}
		scale := math.Min(1+tt, 1+3) / (1 + tt)
		if scale == 1 {
			exact++
		}
		for a := range delta {
			want := md.ref.mean[a] + scale*delta[a]
			if got := M[i*3+a]; math.Abs(got-want) > 1e-5 {
				t.Errorf("structure %d: m̂[%d] = %v, want %v (t = %v)", i, a, got, want, tt)
			}
		}
	}
	if exact == 0 || exact == k {
		t.Errorf("%d of %d structures have t ≤ r: the test does not cover both cases", exact, k)
	}
}

// The product reference is a function of the training structures' mean, which partial_fit's
// statistics hold: two chunks give Fit on both.
func TestPartialFitProductEqualsFit(t *testing.T) {
	sp, _ := space.New("subtrees", []int64{-1, 0, 0, 1, 1, 2})
	const m, n = 40, 3
	X, ys := synthetic(t, sp, m, n, 8)
	w := weights(rand.New(rand.NewPCG(3, 4)), m)
	opt := baseOptions()
	opt.Solver, opt.EmpiricalWeight, opt.Reference = Exact, 0.7, Product
	full, err := Fit(sp, X, m, n, ys, w, opt)
	if err != nil {
		t.Fatal(err)
	}
	h, wd := 13, sp.Width()
	first, err := PartialFit(nil, sp, X[:h*n], h, n, ys[:h*wd], w[:h], opt)
	if err != nil {
		t.Fatal(err)
	}
	both, err := PartialFit(first, sp, X[h*n:], m-h, n, ys[h*wd:], w[h:], opt)
	if err != nil {
		t.Fatal(err)
	}
	if e := relDiff(both.Coef, full.Coef); e > 1e-10 {
		t.Errorf("partial_fit in two chunks differs from fit by %.2e", e)
	}
	emp := opt
	emp.Reference = Empirical
	other, err := Fit(sp, X, m, n, ys, w, emp)
	if err != nil {
		t.Fatal(err)
	}
	if e := relDiff(other.Coef, full.Coef); e < 1e-3 {
		t.Errorf("the empirical reference gives the same model (%.2e): the option does nothing", e)
	}
}

// momentsOf sums Σs, Σ s ψ and Σ s ψψᵀ by blocked products for dense structures and over the
// non-zero pairs for sparse ones: both must be the sums, here taken one example at a time over
// more rows than one block of the products.
func TestMomentsOfBothPaths(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	for _, c := range []struct {
		kind  string
		args  []int64
		dense bool
	}{{"multilabel", []int64{20}, true}, {"permutations", []int64{5}, true}, {"multiclass", []int64{20}, false}} {
		sp, err := space.New(c.kind, c.args)
		if err != nil {
			t.Fatal(err)
		}
		const m = 300
		_, ys := synthetic(t, sp, m, 2, 6)
		s := weights(r, m)
		s[7] = 0
		p, err := NewProblem(sp, ys, m, s, 1)
		if err != nil {
			t.Fatal(err)
		}
		d := sp.Dim()
		var pairs float64
		wantSum, wantFirst, wantSecond := 0.0, make([]float64, d), mat.NewSymDense(d, nil)
		for i := 0; i < m; i++ {
			z := 0
			psi := make([]float64, d)
			for a, v := range p.Delta.RawRowView(i) {
				psi[a] = v + p.Mean[a]
				if psi[a] != 0 {
					z++
				}
			}
			pairs += float64(z*(z+1)) / 2
			wantSum += s[i]
			for a := range psi {
				wantFirst[a] += s[i] * psi[a]
				for b := a; b < d; b++ {
					wantSecond.SetSym(a, b, wantSecond.At(a, b)+s[i]*psi[a]*psi[b])
				}
			}
		}
		if dense := pairs > float64(m*d*d)/2/denseMomentsShare; dense != c.dense {
			t.Fatalf("%s: dense path %v, want %v", c.kind, dense, c.dense)
		}
		mo := momentsOf(p)
		if math.Abs(mo.sum-wantSum) > 1e-12*wantSum {
			t.Errorf("%s: Σs %v, want %v", c.kind, mo.sum, wantSum)
		}
		for a := 0; a < d; a++ {
			if math.Abs(mo.first[a]-wantFirst[a]) > 1e-12*wantSum {
				t.Errorf("%s: Σ s ψ_%d = %v, want %v", c.kind, a, mo.first[a], wantFirst[a])
			}
			for b := a; b < d; b++ {
				if math.Abs(mo.second.At(a, b)-wantSecond.At(a, b)) > 1e-12*wantSum {
					t.Errorf("%s: Σ s ψ_%d ψ_%d = %v, want %v", c.kind, a, b, mo.second.At(a, b), wantSecond.At(a, b))
				}
			}
		}
	}
}

// definiteMixture may skip the eigendecomposition only where symRank would find full rank: a
// mixture with w < 1 over a positive definite uniform S, not too close to w = 1; never at w = 1,
// and never when S_U is singular (multi-class and k-subsets: ψ sums to a constant).
func TestDefiniteMixtureAgreesWithSymRank(t *testing.T) {
	for _, c := range []struct {
		kind string
		args []int64
	}{{"multilabel", []int64{6}}, {"permutations", []int64{4}}, {"multiclass", []int64{5}}, {"ksubsets", []int64{6, 2}}} {
		sp, err := space.New(c.kind, c.args)
		if err != nil {
			t.Fatal(err)
		}
		const m = 9
		_, ys := synthetic(t, sp, m, 2, 3)
		for _, w := range []float64{0.3, 0.99, 1 - 1e-13, 1} {
			p, err := NewProblem(sp, ys, m, nil, 1)
			if err != nil {
				t.Fatal(err)
			}
			if err := p.useReference(sp, Empirical, w); err != nil {
				t.Fatal(err)
			}
			d := sp.Dim()
			definite := definiteMixture(sp, p.ref.cov, w)
			if definite && symRank(p.ref.cov) != d {
				t.Errorf("%s w=%v: definite, but symRank finds rank %d < %d", c.kind, w, symRank(p.ref.cov), d)
			}
			wantDefinite := (c.kind == "multilabel" || c.kind == "permutations") && w <= 0.99
			if definite != wantDefinite {
				t.Errorf("%s w=%v: definite %v, want %v", c.kind, w, definite, wantDefinite)
			}
			if definite && p.ref.rank != d {
				t.Errorf("%s w=%v: rank %d, want %d", c.kind, w, p.ref.rank, d)
			}
		}
	}
}

// The uniform measure's dense covariance of a DAG's paths takes seconds (each entry walks a
// descendant set): partial_fit, the statistics' solve and the distributed CG build it under their
// stop flag, which it looks at before every row.
func TestUniformReferenceStops(t *testing.T) {
	sp, err := space.NewDAGPaths([][]int{nil, {0}, {0}, {1, 2}}, false)
	if err != nil {
		t.Fatal(err)
	}
	stopped := new(cancel.Flag)
	stopped.Stop()
	if _, _, err := uniformReference(sp, stopped); !errors.Is(err, cancel.ErrCancelled) {
		t.Errorf("stopped: %v, want cancel.ErrCancelled", err)
	}
	_, S, err := uniformReference(sp, new(cancel.Flag))
	if err != nil || !mat.EqualApprox(S, space.Dense(sp.Covariance()), 0) {
		t.Errorf("not stopped: %v, or a covariance other than space.Dense's", err)
	}
}

// TestPartialFitStartsFromOneStructure starts partial_fit with a chunk whose rows all hold one
// structure under empirical_weight = 1: the measure is that structure alone, S = 0 and every δ = 0,
// so the chunk's optimum is W = 0; the next chunk must then give fit's model. The exact solver
// refused the first chunk (the intercept's row of H was zero and no null direction was found;
// probe EQ), so a stream sorted by label could never start.
func TestPartialFitStartsFromOneStructure(t *testing.T) {
	for _, c := range []struct {
		kind string
		args []int64
		ref  Reference
	}{
		{"multilabel", []int64{3}, Empirical},
		{"multilabel", []int64{3}, Product},
		{"permutations", []int64{3}, Empirical},
		{"subtrees", []int64{-1, 0, 0, 1}, Empirical},
	} {
		sp, err := space.New(c.kind, c.args)
		if err != nil {
			t.Fatal(err)
		}
		const m, n, h = 40, 3, 20
		X, ys := synthetic(t, sp, m, n, 8)
		wd := sp.Width()
		for i := 1; i < h; i++ {
			copy(ys[i*wd:(i+1)*wd], ys[:wd])
		}
		opt := baseOptions()
		opt.Solver, opt.EmpiricalWeight, opt.Reference, opt.Alpha = Exact, 1, c.ref, 0.1
		full, err := Fit(sp, X, m, n, ys, nil, opt)
		if err != nil {
			t.Fatalf("%s %v: fit: %v", c.kind, c.ref, err)
		}
		first, err := PartialFit(nil, sp, X[:h*n], h, n, ys[:h*wd], nil, opt)
		if err != nil {
			t.Fatalf("%s %v: first chunk: %v", c.kind, c.ref, err)
		}
		if norm := mat.Norm(first.Coef, 2); norm != 0 {
			t.Errorf("%s %v: the first chunk's coefficients have norm %g, want 0", c.kind, c.ref, norm)
		}
		both, err := PartialFit(first, sp, X[h*n:], m-h, n, ys[h*wd:], nil, opt)
		if err != nil {
			t.Fatalf("%s %v: second chunk: %v", c.kind, c.ref, err)
		}
		if e := relDiff(both.Coef, full.Coef); e > 1e-10 {
			t.Errorf("%s %v: partial_fit in two chunks differs from fit by %.2e", c.kind, c.ref, e)
		}
	}
}

// embedOf is ψ(y) of one structure.
func embedOf(sp space.Space, y []int64) []float64 {
	psi := make([]float64, sp.Dim())
	space.EmbedRows(sp, y, 1, psi)
	return psi
}

// embedAll is ψ(y) of every structure of sp, in the order of sp.Enumerate.
func embedAll(t *testing.T, sp space.Space) [][]float64 {
	t.Helper()
	var all [][]float64
	if err := sp.Enumerate(func(y []int64) bool {
		all = append(all, embedOf(sp, y))
		return true
	}); err != nil {
		t.Fatal(err)
	}
	return all
}

// referenceSpaces are the small spaces the reference-measure tests enumerate: one of each kind
// with a different structure (labels, classes, rankings, a tree, subsets of fixed size).
func referenceSpaces(t *testing.T) []space.Space {
	t.Helper()
	var out []space.Space
	for _, tc := range []struct {
		kind   string
		params []int64
	}{
		{"multilabel", []int64{3}},
		{"multiclass", []int64{4}},
		{"permutations", []int64{4}},
		{"subtrees", []int64{-1, 0, 0, 1, 1}},
		{"ksubsets", []int64{5, 2}},
	} {
		sp, err := space.New(tc.kind, tc.params)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, sp)
	}
	return out
}

// productCase is a small space with a product measure, with the kind and parameters productProb reads.
type productCase struct {
	kind   string
	params []int64
	sp     space.Space
}

// productCases are the spaces the product-measure tests enumerate: labels, classes, paths to any
// node and to leaves, and two trees of subtrees.
func productCases(t *testing.T) []productCase {
	t.Helper()
	var out []productCase
	for _, tc := range []productCase{
		{kind: "multilabel", params: []int64{3}},
		{kind: "multiclass", params: []int64{4}},
		{kind: "hierarchy_paths", params: []int64{0, -1, 0, 0, 1, 1, 2}},
		{kind: "hierarchy_paths", params: []int64{1, -1, 0, 0, 1, 1}},
		{kind: "subtrees", params: []int64{-1, 0, 0, 1, 1}},
		{kind: "subtrees", params: []int64{-1, 0, 1, 1, 0}},
	} {
		sp, err := space.New(tc.kind, tc.params)
		if err != nil {
			t.Fatal(err)
		}
		tc.sp = sp
		out = append(out, tc)
	}
	return out
}
