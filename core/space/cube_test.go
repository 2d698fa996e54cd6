package space_test

import (
	"fmt"
	"testing"

	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/space/spacetest"
)

// TestCubeClaims: a space claiming to be the cube lists exactly the 2^d distinct 0/1 vectors as ψ;
// the other spaces that hold 0/1 vectors (a subset of the cube) do not claim it.
func TestCubeClaims(t *testing.T) {
	for _, c := range []struct {
		kind   string
		params []int64
		cube   bool
	}{
		{"multilabel", []int64{5}, true},
		{"ksubsets", []int64{5, 2}, false},
		{"subtrees", []int64{-1, 0, 0, 1}, false},
		{"multiclass", []int64{4}, false},
	} {
		s, err := space.New(c.kind, c.params)
		if err != nil {
			t.Fatal(err)
		}
		if space.IsCube(s) != c.cube {
			t.Errorf("%s%v: IsCube = %v", c.kind, c.params, !c.cube)
		}
		if !c.cube {
			continue
		}
		b := spacetest.Enumerate(t, s)
		seen := map[string]bool{}
		for _, psi := range b.Psis {
			for _, v := range psi {
				if v != 0 && v != 1 {
					t.Fatalf("%s: ψ has %v", c.kind, psi)
				}
			}
			seen[fmt.Sprint(psi)] = true
		}
		if len(seen) != 1<<s.Dim() {
			t.Errorf("%s: %d distinct ψ, want 2^%d", c.kind, len(seen), s.Dim())
		}
	}
}
