package prob

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestNoConcreteSpaceTypes keeps what a space knows in the space: the package reaches spaces only
// through space.Space and the optional capability interfaces of package space (Partition, Local,
// Rooted, Canonical, NormBounded, SupportBounded, ...), never by switching on their concrete types,
// so that adding a space is a file in core/space.
func TestNoConcreteSpaceTypes(t *testing.T) {
	concrete := regexp.MustCompile(`\*space\.[A-Z]\w*`)
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(src), "\n") {
			if concrete.MatchString(line) {
				t.Errorf("%s:%d names a concrete space type: %s", f, i+1, strings.TrimSpace(line))
			}
		}
	}
}
