package prob

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/xmat"
	"gonum.org/v1/gonum/mat"
)

// bruteForceRows gives every row the marginals and log Z of bruteForce, the sum one structure at a
// time, to rounding: on spaces with and without closed forms, with more structures than a chunk
// (bruteChunk) and more rows than a block (bruteRows), and with scores whose maximum structure
// lies in a later chunk than the first (the rows' sums are rescaled as the maximum rises).
func TestBruteForceRowsMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	spaces := []space.Space{
		mustSpace(t, "cliques", 5),
		mustSpace(t, "cliques", 9), // 503 structures: two chunks
		mustSpace(t, "tournaments", 4),
		mustSpace(t, "multilabel", 9),
		mustSpace(t, "permutations", 5),
		mustSpace(t, "subtrees", smallTree...),
	}
	for _, sp := range spaces {
		for _, q := range []int{1, 3, bruteRows + 5} {
			for _, scale := range []float64{0.1, 3, 40} {
				name := fmt.Sprintf("%s%v/q=%d/scale=%g", sp.Kind(), sp.Params(), q, scale)
				d := sp.Dim()
				U := make([]float64, q*d)
				for i := range U {
					U[i] = scale * r.NormFloat64() / math.Sqrt(float64(d))
				}
				mean, logZ := make([]float64, q*d), make([]float64, q)
				if err := bruteForceRows(sp, U, q, mean, logZ, nil); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				for i := 0; i < q; i++ {
					want := make([]float64, d)
					lz, err := bruteForce(sp, U[i*d:(i+1)*d], want, nil)
					if err != nil {
						t.Fatal(err)
					}
					clipToRange(sp, want)
					if math.Abs(logZ[i]-lz) > 1e-12*math.Max(1, math.Abs(lz)) {
						t.Errorf("%s, row %d: log Z %v, want %v", name, i, logZ[i], lz)
					}
					for j, w := range want {
						if math.Abs(mean[i*d+j]-w) > 1e-12 {
							t.Errorf("%s, row %d: E[ψ_%d] = %v, want %v", name, i, j, mean[i*d+j], w)
							break
						}
					}
				}
				// log Z alone
				alone := make([]float64, q)
				if err := bruteForceRows(sp, U, q, nil, alone, nil); err != nil {
					t.Fatal(err)
				}
				for i := range alone {
					if alone[i] != logZ[i] {
						t.Errorf("%s, row %d: log Z alone %v, with the marginals %v", name, i, alone[i], logZ[i])
					}
				}
			}
		}
	}
}

// A row's marginals by bruteForceRows do not depend on the rows beside it: alone, or anywhere in a
// batch of any size, bit for bit (MulPanel sums each entry's terms in order whatever the blocking).
func TestBruteForceRowsIndependentOfTheBatch(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 34))
	sp := mustSpace(t, "cliques", 9)
	d := sp.Dim()
	const q = 2*bruteRows + 7
	U := make([]float64, q*d)
	for i := range U {
		U[i] = 2 * r.NormFloat64()
	}
	mean, logZ := make([]float64, q*d), make([]float64, q)
	if err := bruteForceRows(sp, U, q, mean, logZ, nil); err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{0, 3, bruteRows + 1, q - 1} {
		one, lz := make([]float64, d), make([]float64, 1)
		if err := bruteForceRows(sp, U[i*d:(i+1)*d], 1, one, lz, nil); err != nil {
			t.Fatal(err)
		}
		if lz[0] != logZ[i] {
			t.Errorf("row %d: log Z alone %v, in the batch %v", i, lz[0], logZ[i])
		}
		for j := range one {
			if one[j] != mean[i*d+j] {
				t.Errorf("row %d: E[ψ_%d] alone %v, in the batch %v", i, j, one[j], mean[i*d+j])
				break
			}
		}
	}
}

// A set stop flag ends bruteForceRows inside the enumeration, with ErrCancelled.
func TestBruteForceRowsStops(t *testing.T) {
	sp := mustSpace(t, "cliques", 20)
	stop := new(cancel.Flag)
	stop.Stop()
	d := sp.Dim()
	if err := bruteForceRows(sp, make([]float64, 2*d), 2, make([]float64, 2*d), nil, stop); !errors.Is(err, cancel.ErrCancelled) {
		t.Errorf("got %v, want ErrCancelled", err)
	}
}

// The entry points that sum a brute-forced space for many rows at once (the fit's objective and
// gradient, MarginalsRows, LogPartitionRows, ScoreSamplesRows) give what the row-by-row sums give,
// on Cliques(7), whose 121 structures have no closed form; a row whose scores cannot be summed is
// refused with its index.
func TestBruteForcedEntryPointsMatchRowByRow(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 36))
	sp := mustSpace(t, "cliques", 7)
	if !bruteForced(sp) {
		t.Fatal("Cliques(7) is no longer summed by brute force: pick another space for this test")
	}
	const q, n = 40, 3
	d, w := sp.Dim(), sp.Width()
	X := make([]float64, q*n)
	for i := range X {
		X[i] = r.NormFloat64()
	}
	coef := make([]float64, (n+1)*d)
	for i := range coef {
		coef[i] = 0.5 * r.NormFloat64()
	}
	md, err := NewModel(sp, coef, n, true)
	if err != nil {
		t.Fatal(err)
	}
	md.Inference.Method = InferExact
	U := make([]float64, q*d)
	md.scoreInto(xmat.DenseRows(X, q, n), U)
	ys := make([]int64, q*w)
	for i := 0; i < q; i++ {
		for v := 0; v < w; v++ { // a vertex set of 0 or ≥ 2 vertices
			ys[i*w+v] = int64(r.IntN(2))
		}
		ones := 0
		for _, y := range ys[i*w : (i+1)*w] {
			ones += int(y)
		}
		if ones == 1 {
			clear(ys[i*w : (i+1)*w])
		}
	}
	wantMean, wantLZ := make([]float64, q*d), make([]float64, q)
	for i := 0; i < q; i++ {
		lz, err := bruteForce(sp, U[i*d:(i+1)*d], wantMean[i*d:(i+1)*d], nil)
		if err != nil {
			t.Fatal(err)
		}
		clipToRange(sp, wantMean[i*d:(i+1)*d])
		wantLZ[i] = lz
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }

	mean := make([]float64, q*d)
	if err := md.Marginals(X, q, n, 1, mean); err != nil {
		t.Fatal(err)
	}
	for i := range mean {
		if !near(mean[i], wantMean[i]) {
			t.Fatalf("Marginals: entry %d = %v, want %v", i, mean[i], wantMean[i])
		}
	}
	lz := make([]float64, q)
	res, err := md.LogPartition(X, q, n, LogZOptions{Method: LogZAuto}, lz)
	if err != nil {
		t.Fatal(err)
	}
	for i := range lz {
		if !near(lz[i], wantLZ[i]) || res[i].Method != LogZExact || !res[i].Valid || res[i].LogZ != lz[i] {
			t.Fatalf("LogPartition: row %d = %v (%+v), want %v", i, lz[i], res[i], wantLZ[i])
		}
	}
	lp := make([]float64, q)
	if _, err := md.ScoreSamples(X, q, n, ys, LogZOptions{Method: LogZExact}, lp); err != nil {
		t.Fatal(err)
	}
	psi := make([]float64, d)
	for i := range lp {
		sp.Embed(ys[i*w:(i+1)*w], psi)
		if want := dot(U[i*d:(i+1)*d], psi) - wantLZ[i]; !near(lp[i], min(want, 0)) {
			t.Fatalf("ScoreSamples: row %d = %v, want %v", i, lp[i], want)
		}
	}

	// The fit's objective and gradient: J = λ‖W‖² + (1/m) Σ [log Z(u_i) − ⟨u_i, ψ(y_i)⟩] and
	// ∇J = 2λW + (1/m) Σ x̃_i (E[ψ] − ψ(y_i))ᵀ, the intercept's row unpenalised.
	const lambda = 0.3
	p, err := NewProblem(sp, X, q, n, ys, nil, lambda, true)
	if err != nil {
		t.Fatal(err)
	}
	W := mat.NewDense(n+1, d, coef)
	grad := mat.NewDense(n+1, d, nil)
	J, err := p.Objective(W, InferenceOptions{Method: InferExact}, 1, grad)
	if err != nil {
		t.Fatal(err)
	}
	penalised := W.Slice(0, n, 0, d)
	wantJ := lambda * mat.Norm(penalised, 2) * mat.Norm(penalised, 2)
	wantGrad := mat.NewDense(n+1, d, nil)
	wantGrad.Slice(0, n, 0, d).(*mat.Dense).Scale(2*lambda, penalised)
	for i := 0; i < q; i++ {
		sp.Embed(ys[i*w:(i+1)*w], psi)
		wantJ += (wantLZ[i] - dot(U[i*d:(i+1)*d], psi)) / q
		xt := append(slices.Clone(X[i*n:(i+1)*n]), 1)
		for a, xa := range xt {
			for j := 0; j < d; j++ {
				wantGrad.Set(a, j, wantGrad.At(a, j)+xa*(wantMean[i*d+j]-psi[j])/q)
			}
		}
	}
	if !near(J, wantJ) {
		t.Errorf("objective %v, want %v", J, wantJ)
	}
	if !mat.EqualApprox(grad, wantGrad, 1e-12) {
		t.Errorf("gradient\n%v\nwant\n%v", mat.Formatted(grad), mat.Formatted(wantGrad))
	}

	// a row beyond the summable range is refused by name
	big := slices.Clone(X)
	big[5*n] = 1e300
	if err := md.Marginals(big, q, n, 1, mean); err == nil || !strings.Contains(err.Error(), "row 5") {
		t.Errorf("Marginals with row 5 at 1e300: %v, want an error naming row 5", err)
	}
}

// A set stop flag ends bruteForceRows between the blocks of rows a chunk of structures is added
// to, not only every bruteForceStopEvery structures: on Cliques(11), 2,037 structures (fewer than
// that), the sum over many rows was still run whole (a chunk against a million rows of a fit is
// seconds of work).
func TestBruteForceRowsStopsBetweenRows(t *testing.T) {
	sp := mustSpace(t, "cliques", 11)
	if sp.LogCount() >= math.Log(bruteForceStopEvery) {
		t.Fatal("Cliques(11) has more structures than bruteForceStopEvery: pick a smaller space")
	}
	const q = 3 * bruteRows
	d := sp.Dim()
	stop := new(cancel.Flag)
	stop.Stop()
	if err := bruteForceRows(sp, make([]float64, q*d), q, make([]float64, q*d), nil, stop); !errors.Is(err, cancel.ErrCancelled) {
		t.Errorf("got %v, want ErrCancelled", err)
	}
}
