package check

import (
	"errors"
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
