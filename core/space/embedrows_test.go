package space_test

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/space"
)

// TestEmbedRowsUntil checks that a stop set before the call leaves every row unwritten and is
// reported, and that an unset stop embeds every row as Embed does.
func TestEmbedRowsUntil(t *testing.T) {
	s, err := space.NewPermutations(6)
	if err != nil {
		t.Fatal(err)
	}
	const m = 1000
	ys := make([]int64, m*s.Width())
	r := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < m; i++ {
		s.Sample(r, ys[i*s.Width():(i+1)*s.Width()])
	}
	psi := make([]float64, m*s.Dim())
	var stop cancel.Flag
	stop.Stop()
	if err := space.EmbedRowsUntil(s, ys, m, psi, &stop); !errors.Is(err, cancel.ErrCancelled) {
		t.Fatalf("got %v, want cancel.ErrCancelled", err)
	}
	if i := slices.IndexFunc(psi, func(v float64) bool { return v != 0 }); i >= 0 {
		t.Fatalf("value %d was written after stop", i)
	}
	var running cancel.Flag
	if err := space.EmbedRowsUntil(s, ys, m, psi, &running); err != nil {
		t.Fatal(err)
	}
	want := make([]float64, s.Dim())
	for i := 0; i < m; i++ {
		s.Embed(ys[i*s.Width():(i+1)*s.Width()], want)
		if !slices.Equal(psi[i*s.Dim():(i+1)*s.Dim()], want) {
			t.Fatalf("row %d: got %v, want %v", i, psi[i*s.Dim():(i+1)*s.Dim()], want)
		}
	}
}
