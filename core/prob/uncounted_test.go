package prob

import (
	"errors"
	"testing"

	"github.com/combpred/combpred/core/space"
)

// The model needs the uniform measure (samplers, partition functions): a space without counts is
// refused by Fit, NewModel and the bytes of a model, with the reason.
func TestUncountedSpacesAreRefused(t *testing.T) {
	sp := mustSpace(t, "dag_subsets", 4, 0, 1, 0, 1, 0, 2, 1, 2)
	X := []float64{1, 2}
	ys := []int64{1, 1, 0, 0, 1, 1, 1, 1}
	if _, err := Fit(sp, X, 2, 1, ys, nil, Options{Alpha: 1, Tol: 1e-6, MaxIter: 10}); !errors.Is(err, space.ErrUncounted) {
		t.Errorf("Fit: got %v, want ErrUncounted", err)
	}
	if _, err := NewModel(sp, make([]float64, 4), 1, false); !errors.Is(err, space.ErrUncounted) {
		t.Errorf("NewModel: got %v, want ErrUncounted", err)
	}
}
