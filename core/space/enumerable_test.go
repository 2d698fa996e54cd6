package space_test

import (
	"errors"
	"testing"

	"github.com/combpred/combpred/core/space"
)

// TestEnumerableBoundsValues: a chain of 10⁶ nodes has 10⁶ rooted subtrees (fewer than
// MaxEnumerate) but 10¹² values to list; Enumerable refuses it at once, and accepts small spaces.
func TestEnumerableBoundsValues(t *testing.T) {
	parent := make([]int, 1_000_000)
	for i := range parent {
		parent[i] = i - 1
	}
	chain, err := space.NewSubtrees(parent)
	if err != nil {
		t.Fatal(err)
	}
	if err := space.Enumerable(chain); !errors.Is(err, space.ErrTooLarge) {
		t.Fatalf("a chain of 10⁶ nodes: got %v, want space.ErrTooLarge", err)
	}
	small, err := space.NewPermutations(6)
	if err != nil {
		t.Fatal(err)
	}
	if err := space.Enumerable(small); err != nil {
		t.Fatalf("Permutations(6): %v", err)
	}
}
