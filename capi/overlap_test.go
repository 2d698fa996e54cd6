package main

import "testing"

// disjoint refuses an output over an input or another output, whatever the order of the
// arguments and the element types, and accepts neighbours, empty arrays and inputs that overlap
// each other (only outputs are written).
func TestDisjoint(t *testing.T) {
	buf := make([]float64, 20)
	ints := make([]int64, 20)
	for _, c := range []struct {
		name string
		rs   []region
		ok   bool
	}{
		{"separate", []region{inputOf("X", buf[:10]), outputOf("out", buf[10:])}, true},
		{"out over X", []region{inputOf("X", buf[:10]), outputOf("out", buf[9:])}, false},
		{"out first", []region{outputOf("out", buf[:11]), inputOf("X", buf[10:])}, false},
		{"same array", []region{inputOf("X", buf), outputOf("out", buf)}, false},
		{"inside", []region{inputOf("X", buf), outputOf("out", buf[5:6])}, false},
		{"two outputs", []region{inputOf("X", ints[:2]), outputOf("a", buf[:5]), outputOf("b", buf[4:8])}, false},
		{"two inputs overlap", []region{inputOf("X", buf[:10]), inputOf("w", buf[5:10]), outputOf("out", buf[10:])}, true},
		{"empty output", []region{inputOf("X", buf), outputOf("out", buf[5:5])}, true},
		{"raw input", []region{rawInput("indptr", nil, 3, 8), outputOf("out", buf)}, true},
	} {
		if err := disjoint(c.rs...); (err == nil) != c.ok {
			t.Errorf("%s: got %v, want ok %v", c.name, err, c.ok)
		}
	}
}
