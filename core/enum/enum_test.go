package enum

import (
	"strings"
	"testing"
)

type color int

var colorNames = []string{"red", "green", "blue"}

func TestName(t *testing.T) {
	for v, want := range map[color]string{0: "red", 2: "blue", 3: "color(3)", -1: "color(-1)"} {
		if got := Name(colorNames, v, "color"); got != want {
			t.Errorf("Name(%d) = %q, want %q", int(v), got, want)
		}
	}
}

func TestParse(t *testing.T) {
	for i, n := range colorNames {
		if v, err := Parse[color](colorNames, "color", n); err != nil || int(v) != i {
			t.Errorf("Parse(%q) = %d, %v; want %d", n, int(v), err, i)
		}
	}
	for names, want := range map[string]string{
		"red":            `unknown color "pink" (want red)`,
		"red green":      `unknown color "pink" (want red or green)`,
		"red green blue": `unknown color "pink" (want red, green or blue)`,
	} {
		_, err := Parse[color](strings.Fields(names), "color", "pink")
		if err == nil || err.Error() != want {
			t.Errorf("Parse with names %q: error %v, want %q", names, err, want)
		}
	}
}
