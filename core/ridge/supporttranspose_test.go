package ridge

import (
	"sync"
	"testing"

	"github.com/combpred/combpred/core/budget"
	"github.com/combpred/combpred/core/kernel"
	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/mat"
)

// A dense kernel model keeps its support's transpose once scoring first needs it, and every way
// of scoring gives the same scores bit for bit: a block of rows, each row alone, goroutines at
// once, a model whose transpose the memory budget refused, and the model read back from bytes.
func TestSupportTransposeKeepsScores(t *testing.T) {
	defer budget.Set(budget.Setting())
	sp, _ := space.NewMultilabel(3)
	const m, n, q = 200, 70, 9
	X, ys := synthetic(t, sp, m, n, 41)
	Xq, _ := synthetic(t, sp, q, n, 42)
	opt := baseOptions()
	opt.Kernel = kernel.Kernel{Kind: kernel.RBF, Gamma: 0.02}
	md, err := Fit(sp, X, m, n, ys, nil, opt)
	if err != nil {
		t.Fatal(err)
	}
	if md.supportT.d != nil {
		t.Fatal("the fit left a transpose with the model before any scoring")
	}
	want := make([]float64, q*3)
	if err := md.Decision(Xq, q, n, want); err != nil {
		t.Fatal(err)
	}
	kept := md.supportT.d
	if kept == nil || !mat.Equal(kept, md.Support.T()) {
		t.Fatal("scoring dense rows left no transpose of the support with the model")
	}
	check := func(what string, md *Model) {
		t.Helper()
		got := make([][]float64, q)
		var wg sync.WaitGroup
		for i := range got {
			got[i] = make([]float64, 3)
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := md.Decision(Xq[i*n:(i+1)*n], 1, n, got[i]); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		for i := range got {
			for a, v := range got[i] {
				if v != want[i*3+a] {
					t.Fatalf("%s: row %d alone, score %d = %v; in the block %v", what, i, a, v, want[i*3+a])
				}
			}
		}
	}
	check("kept transpose", md)
	if md.supportT.d != kept {
		t.Error("a later call made the transpose again")
	}
	b, err := md.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	back, err := UnmarshalModel(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := budget.Set(64 << 10); err != nil { // below the transpose's 112 KB
		t.Fatal(err)
	}
	check("decoded model, transpose refused by the budget", back)
	if back.supportT.d != nil {
		t.Error("the budget refused the transpose, yet the model keeps one")
	}
}
