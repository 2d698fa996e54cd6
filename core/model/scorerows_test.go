package model_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/model"
	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/xmat"
)

// costly scores a row as its first feature times the coordinate index, at a ScoreWork that
// makes ScoreRows score two rows between checks of the stop flag; it sets stop after its
// first call, and counts its calls.
type costly struct {
	sp    space.Space
	work  float64
	calls int
	stop  *cancel.Flag
}

func (c *costly) Output() space.Space { return c.sp }
func (c *costly) ScoreWork() float64  { return c.work }
func (c *costly) DecisionRows(X xmat.Rows, U []float64) error {
	c.calls++
	if c.stop != nil {
		c.stop.Stop()
	}
	d := c.sp.Dim()
	for i := range X.Q {
		for a := range d {
			U[i*d+a] = X.Dense[i*X.N] * float64(a)
		}
	}
	return nil
}
func (c *costly) Decision(X []float64, q, n int, U []float64) error {
	return c.DecisionRows(xmat.DenseRows(X, q, n), U)
}
func (c *costly) Predict([]float64, int, int, []int64, *cancel.Flag) error { return nil }
func (c *costly) PredictRows(xmat.Rows, []int64, *cancel.Flag) error       { return nil }
func (c *costly) MarshalBinary() ([]byte, error)                           { return nil, nil }

func TestScoreRowsChunksExpensiveScoresAndStops(t *testing.T) {
	sp, err := space.New("multilabel", []int64{3})
	if err != nil {
		t.Fatal(err)
	}
	const q, n = 9, 2
	X := make([]float64, q*n)
	for i := range q {
		X[i*n] = float64(i + 1)
	}
	want := make([]float64, q*3)
	cheap := &costly{sp: sp, work: 1}
	if err := model.ScoreRows(cheap, xmat.DenseRows(X, q, n), want, nil); err != nil || cheap.calls != 1 {
		t.Fatalf("cheap scores: %v in %d calls, want one call", err, cheap.calls)
	}
	dear := &costly{sp: sp, work: 1 << 27}
	if c := model.ScoreChunk(dear, q); c != 2 {
		t.Fatalf("ScoreChunk = %d, want 2", c)
	}
	got := make([]float64, q*3)
	if err := model.ScoreRows(dear, xmat.DenseRows(X, q, n), got, nil); err != nil || dear.calls != 5 {
		t.Fatalf("dear scores: %v in %d calls, want 5", err, dear.calls)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("chunked scores %v, want %v", got, want)
	}
	stopped := &costly{sp: sp, work: 1 << 27, stop: new(cancel.Flag)}
	if err := model.ScoreRows(stopped, xmat.DenseRows(X, q, n), got, stopped.stop); !errors.Is(err, cancel.ErrCancelled) || stopped.calls != 1 {
		t.Fatalf("stopped after the first chunk: %v after %d calls, want ErrCancelled after 1", err, stopped.calls)
	}
	if err := model.ScoreRows(dear, xmat.DenseRows(X[:5], q, n), got, nil); err == nil {
		t.Fatal("rows shorter than q × n were scored")
	}
}
