package ridge

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/combpred/combpred/core/space"
)

// largePairCases are pair spaces beyond MaxDim (and one below it, to compare with the dense
// Kronecker preconditioner), with m examples of f features.
var largePairCases = []struct {
	kind string
	n    int64
	m, f int
}{
	{"permutations", 50, 300, 10},  // d = 1225: the dense path is possible
	{"permutations", 120, 300, 10}, // d = 7140
	{"dicycles", 141, 300, 10},     // d = 9870
}

// largePairData builds a large pair-space problem: structures decoded from a random linear model
// of the inputs plus noise (synthetic), so the fit is far from trivial.
func largePairData(tb testing.TB, kind string, n int64, m, f int) (space.Space, []float64, []int64) {
	tb.Helper()
	sp, err := space.New(kind, []int64{n})
	if err != nil {
		tb.Fatal(err)
	}
	X, ys := synthetic(tb, sp, m, f, uint64(n))
	return sp, X, ys
}

// fitMeasured fits with opt and returns the model, the wall time and the largest Go heap in use
// seen after any CG iteration (garbage not yet collected included).
func fitMeasured(tb testing.TB, sp space.Space, X []float64, m, n int, ys []int64, opt Options) (*Model, time.Duration, uint64) {
	tb.Helper()
	runtime.GC()
	var ms runtime.MemStats
	var peak uint64
	opt.Progress = func(int, float64, float64) bool {
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapInuse)
		return true
	}
	t0 := time.Now()
	model, err := Fit(sp, X, m, n, ys, nil, opt)
	if err != nil {
		tb.Fatal(err)
	}
	return model, time.Since(t0), peak
}

// BenchmarkLargePairSpace fits the linear model (solver auto, which is CG here) on pair spaces
// with each preconditioner, logging iterations, time and the peak Go heap. Beyond MaxDim this is
// the operator-only path; on Permutations(50) "kron-dense" is the Kronecker preconditioner with
// the dense S and D̄ (kronPrecond, what the pair spaces used below MaxDim before spectralPrecond),
// the others the operator-only path forced. Run it with
//
//	go test ./core/ridge -run '^$' -bench LargePairSpace -benchtime 1x
func BenchmarkLargePairSpace(b *testing.B) {
	modes := []struct {
		name  string
		mode  precondMode
		dense bool
	}{{"kron-dense", precondKron, true}, {"spectral", precondAuto, false}, {"spectral+mean", precondSpectralMean, false},
		{"diagonal", precondDiag, false}, {"none", precondNone, false}}
	for _, c := range largePairCases {
		sp, X, ys := largePairData(b, c.kind, c.n, c.m, c.f)
		for _, md := range modes {
			if md.dense && sp.Dim() > MaxDim {
				continue
			}
			b.Run(fmt.Sprintf("%s%d/%s", c.kind, c.n, md.name), func(b *testing.B) {
				limit := 0
				if md.dense {
					limit = MaxDim
				}
				for range b.N {
					withDenseMaxDim(limit, func() {
						withPrecond(md.mode, func() {
							opt := baseOptions()
							opt.Alpha, opt.Tol, opt.MaxIter = 1, 1e-6, 5000
							model, dt, heap := fitMeasured(b, sp, X, c.m, c.f, ys, opt)
							b.Logf("d=%d m=%d n=%d: %d iterations, %v, relative gradient %.2g, converged %v, peak heap %d MB (dense S would be %d MB)",
								sp.Dim(), c.m, c.f, model.Result.Iterations, dt.Round(time.Millisecond),
								model.Result.RelGrad, model.Result.Converged, heap>>20, 8*sp.Dim()*sp.Dim()>>20)
						})
					})
				}
			})
		}
	}
}
