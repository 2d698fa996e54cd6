package main

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestErrorTextKeepsHeadAndTail: a message longer than the C buffer keeps its start (the call and
// argument) and its end (the diagnosis), cut between characters, within the limit; the buffer
// kept the first 4,095 bytes, which ended inside a character and lost the diagnosis (probe BP).
func TestErrorTextKeepsHeadAndTail(t *testing.T) {
	const limit = 4095
	for _, c := range []struct {
		name, msg string
	}{
		{"short", "row 0: label 1 has value 5"},
		{"ascii", "name " + strings.Repeat("x", 9000) + " row 0: label 1 has value 5"},
		{"two-byte", "name " + strings.Repeat("é", 2100) + " row 0: label 1 has value 5"},
		{"four-byte", "name " + strings.Repeat("𝄞", 3000) + " row 0: label 1 has value 5"},
		{"exactly the limit", strings.Repeat("y", limit)},
	} {
		got := errorText(c.msg, limit)
		if len(c.msg) <= limit {
			if got != c.msg {
				t.Errorf("%s: a message that fits changed", c.name)
			}
			continue
		}
		if len(got) > limit || !utf8.ValidString(got) {
			t.Errorf("%s: %d bytes, valid UTF-8 %v; want at most %d valid bytes", c.name, len(got), utf8.ValidString(got), limit)
		}
		if !strings.HasPrefix(got, "name ") || !strings.HasSuffix(got, "row 0: label 1 has value 5") || !strings.Contains(got, " … ") {
			t.Errorf("%s: head or tail lost: %.40q … %.40q", c.name, got, got[max(len(got)-40, 0):])
		}
	}
	if got := errorText("abcdef", 3); got != "" {
		t.Errorf("no room for the cut mark: got %q, want nothing", got)
	}
}
