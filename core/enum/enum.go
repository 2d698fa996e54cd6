// Package enum holds the mechanics of the core's small named option enums (solvers, samplers,
// inference methods, ...): each enum keeps its own table of names and its own error wording, and
// prints and parses through here, so that all of them treat unknown values and names alike.
package enum

import (
	"fmt"
	"strings"
)

// Integer is the underlying type of an option enum.
type Integer interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64
}

// Name returns names[v], or typeName(v) for a value outside the table (how fmt shows a value
// that has no name), for an enum's String method.
func Name[E Integer](names []string, v E, typeName string) string {
	if v >= 0 && int64(v) < int64(len(names)) {
		return names[v]
	}
	return fmt.Sprintf("%s(%d)", typeName, int64(v))
}

// Parse returns the value whose name is name, the index of name in names. An unknown name is
// an error `unknown <what> "<name>" (want a, b or c)` that lists the table, so that the message
// cannot fall behind a new value.
func Parse[E Integer](names []string, what, name string) (E, error) {
	for i, n := range names {
		if n == name {
			return E(i), nil
		}
	}
	return 0, fmt.Errorf("unknown %s %q (want %s)", what, name, alternatives(names))
}

// alternatives lists names as "a", "a or b", "a, b or c".
func alternatives(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
