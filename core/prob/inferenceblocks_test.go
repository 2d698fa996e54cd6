package prob

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/combpred/combpred/core/budget"
	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/xmat"
)

// TestInferenceScoresABlockAtATime checks that inference holds one block of scores, not n × d
// (probe EE: the whole matrix and the heap's headroom over it were 3–3.5 times the budget), and that
// the blocks are invisible in the results: rows on either side of a boundary get what they get
// alone, a row's samples are seeded by its place in X (not in its block), and an error in a later
// block names the row.
func TestInferenceScoresABlockAtATime(t *testing.T) {
	sp := mustSpace(t, "permutations", 4)
	d := sp.Dim()
	md, err := NewModel(sp, []float64{0.3, -0.2, 0.1, 0.4, -0.5, 0.2, 0.1, 0, -0.1, 0.2, 0.3, -0.3}, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	block := space.PredictChunk(sp, 1<<40) // the rows scored at once
	q := 2*block + 5
	X := make([]float64, q)
	for i := range X {
		X[i] = math.Sin(float64(i))
	}
	defer func(v int64) { _ = budget.Set(v) }(budget.Setting())
	if err := budget.Set(budget.Floats(block+block/2, d)); err != nil { // a block's scores, not all q rows'
		t.Fatal(err)
	}

	lz := make([]float64, q)
	if _, err := md.LogPartition(X, q, 1, LogZOptions{Method: LogZExact}, lz); err != nil {
		t.Fatalf("log Z of %d rows under a budget for %d rows' scores: %v", q, block+block/2, err)
	}
	md.Inference = InferenceOptions{Method: InferExact}
	marg := make([]float64, q*d)
	if err := md.Marginals(X, q, 1, 7, marg); err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{0, block - 1, block, block + 1, 2*block - 1, 2 * block, q - 1} {
		one := make([]float64, 1)
		if _, err := md.LogPartition(X[i:i+1], 1, 1, LogZOptions{Method: LogZExact}, one); err != nil {
			t.Fatal(err)
		}
		alone := make([]float64, d)
		if err := md.Marginals(X[i:i+1], 1, 1, 7, alone); err != nil {
			t.Fatal(err)
		}
		if one[0] != lz[i] {
			t.Errorf("row %d: log Z %v among %d rows, %v alone", i, lz[i], q, one[0])
		}
		for j, v := range alone {
			if marg[i*d+j] != v {
				t.Errorf("row %d: marginal %d is %v among %d rows, %v alone", i, j, marg[i*d+j], q, v)
			}
		}
	}

	// identical rows: seeded by their index in the block, row block+j would repeat row j's samples
	same := make([]float64, block+10)
	ys := make([]int64, len(same)*sp.Width())
	if err := md.Sample(same, len(same), 1, 1, 3, SampleOptions{}, ys); err != nil {
		t.Fatal(err)
	}
	w := sp.Width()
	repeats := 0
	for j := 0; j < 10; j++ {
		if slices.Equal(ys[j*w:(j+1)*w], ys[(block+j)*w:(block+j+1)*w]) {
			repeats++
		}
	}
	if repeats == 10 {
		t.Errorf("rows %d.. repeat the samples of rows 0..: seeded by their place in the block", block)
	}

	X[block+3] = 1e306
	_, err = md.LogPartition(X, q, 1, LogZOptions{Method: LogZExact}, lz)
	if err == nil || !strings.HasPrefix(err.Error(), fmt.Sprintf("X row %d: ", block+3)) { // not its place in the block (probe EF)
		t.Errorf("scores out of range at row %d: %v", block+3, err)
	}
	if err := md.MarginalsRows(xmat.DenseRows(X, q, 1), 7, marg, nil); err == nil || !strings.HasPrefix(err.Error(), fmt.Sprintf("X row %d: ", block+3)) {
		t.Errorf("marginals with scores out of range at row %d: %v", block+3, err)
	}
	X[block+3] = math.NaN()
	if _, err := md.LogPartition(X, q, 1, LogZOptions{Method: LogZExact}, lz); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("X[%d, 0]", block+3)) {
		t.Errorf("NaN at row %d: %v", block+3, err)
	}
}
