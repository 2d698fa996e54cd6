package ridge

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestEncodingGolden pins the byte format: the bytes of every model shape, in versions 3, 2 and 1,
// were written by the encoder before it moved onto core/binfmt, those in version 4 by the encoder
// of version 4, those in version 6 by that of version 6 and those in version 7 (with an empirical
// reference's structures) by that of version 7 (COMBPRED_UPDATE_GOLDEN=1 rewrites them all, =7
// those of version 7). Today's decoder must read them, and its encoder write them back byte
// for byte (version 1 files as version 1). The comparison never involves a fresh fit, whose last
// bits may depend on the CPU's kernels. Versions before 6 hold no statistics shift: the files were
// written without one.
func TestEncodingGolden(t *testing.T) {
	update := os.Getenv("COMBPRED_UPDATE_GOLDEN")
	for i, md := range fittedModels(t) {
		versions := map[int][]byte{}
		var err error
		for _, v := range []int{6, 7} {
			if versions[v], err = md.marshal(v); err != nil {
				t.Fatal(err)
			}
		}
		old := withoutStatsShift(md)
		for _, v := range []int{3, 4} {
			if versions[v], err = old.marshal(v); err != nil {
				t.Fatal(err)
			}
		}
		if md.ref == nil {
			if versions[2], err = old.marshal(2); err != nil {
				t.Fatal(err)
			}
		}
		if md.ny == nil && md.stats == nil && md.ref == nil {
			versions[1] = version1(t, md)
		}
		for v, got := range versions {
			path := filepath.Join("testdata", fmt.Sprintf("model%d.v%d.bin", i, v))
			if update == "1" || update == fmt.Sprint(v) {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			back, err := UnmarshalModel(want)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			again, err := back.marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, want) {
				t.Errorf("%s: read and written again, the bytes differ", path)
			}
		}
	}
}

// withoutStatsShift returns md with statistics that hold no shift, which formats before 6 cannot
// hold (a copy when md's have one).
func withoutStatsShift(md *Model) *Model {
	if md.statsShift() == nil {
		return md
	}
	c := *md
	c.stats = md.stats.clone()
	c.stats.shift = nil
	return &c
}
