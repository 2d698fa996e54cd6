package check

import (
	"errors"
	"math"
	"testing"
)

func TestAtRows(t *testing.T) {
	base := errors.New("X row 46: its scores overflow")
	for _, c := range []struct {
		err  error
		want string
	}{
		{AtRows(0, base), "X row 46: its scores overflow"},
		{AtRows(357, base), "in the rows from 357 on: X row 46: its scores overflow"},
		// a chunk within a chunk: one start, the sum (it read "from 2097 on: in the rows from 357 on")
		{AtRows(2097, AtRows(357, base)), "in the rows from 2454 on: X row 46: its scores overflow"},
		{AtRows(10, nil), ""},
	} {
		got := ""
		if c.err != nil {
			got = c.err.Error()
		}
		if got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
	if !errors.Is(AtRows(5, base), base) {
		t.Error("AtRows hides the chunk's error from errors.Is")
	}
}

// An error about one row names the row of the whole input: "in the rows from 150 on: X row 70"
// pointed at X's row 70 (probe EI).
func TestAtRowsMovesARowError(t *testing.T) {
	row := RowErrorf(46, "X row %d: its %w (%v)", ErrScoresOverflow, 1.5)
	for _, c := range []struct {
		err  error
		want string
	}{
		{AtRows(0, row), "X row 46: its scores overflow (1.5)"},
		{AtRows(357, row), "X row 403: its scores overflow (1.5)"},
		{AtRows(2097, AtRows(357, row)), "X row 2500: its scores overflow (1.5)"},
		{AtRows(10, Finite("X", []float64{0, 1, 2, math.NaN()}, 2)), "X[11, 1] = NaN: values must be finite"},
		{AtRows(10, Magnitude("X", []float64{0, 1, 1e200, 1}, 2)), "X row 11: its squared norm overflows (largest |value| 1e+200): X holds values too large; scale X (e.g. with StandardScaler)"},
	} {
		if got := c.err.Error(); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
	if moved := AtRows(357, row); !errors.Is(moved, ErrScoresOverflow) || row.Row != 46 {
		t.Errorf("moved: %v (wraps ErrScoresOverflow: %v), the original's row %d", moved, errors.Is(moved, ErrScoresOverflow), row.Row)
	}
}
