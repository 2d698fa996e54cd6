package space_test

import (
	"strings"
	"testing"

	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/space/spacetest"
)

func TestDecoderModes(t *testing.T) {
	// The size auto decodes exactly, and the largest size decoded exactly on demand.
	limits := map[string][2]int64{"permutations": {16, 22}, "dicycles": {14, 18}, "ucycles": {14, 18}, "cliques": {20, 20}}
	for kind, lim := range limits {
		limit, hard := lim[0], lim[1]
		// Demanding exact decoding beyond the limit is refused, naming the limit.
		_, err := space.New(kind, []int64{hard + 1, int64(space.DecoderExact)})
		if err == nil || !strings.Contains(err.Error(), "exact decoding") {
			t.Errorf("%s(%d, exact): error %v, want a refusal", kind, hard+1, err)
		}
		// Up to the hard limit exact is accepted and guaranteed; auto keeps the one-parameter form.
		s, err := space.New(kind, []int64{hard, int64(space.DecoderExact)})
		if err != nil || s.Guarantee() != 0 {
			t.Fatalf("%s(%d, exact): %v, guarantee %v", kind, hard, err, s.Guarantee())
		}
		if got := s.Params(); len(got) != 2 || got[1] != int64(space.DecoderExact) {
			t.Errorf("%s exact: Params() = %v, want the mode kept", kind, got)
		}
		a, _ := space.New(kind, []int64{limit, int64(space.DecoderAuto)})
		if got := a.Params(); len(got) != 1 {
			t.Errorf("%s auto: Params() = %v, want [n]", kind, got)
		}
		// Forcing the approximate decoder on an enumerable size keeps it within its guarantee.
		small := int64(5)
		ap, err := space.New(kind, []int64{small, int64(space.DecoderApprox)})
		if err != nil || ap.Guarantee() == 0 {
			t.Fatalf("%s(%d, approximate): %v, guarantee %v", kind, small, err, ap.Guarantee())
		}
		spacetest.CheckDecoder(t, ap, spacetest.Enumerate(t, ap), 300, 3)
		if _, err := space.New(kind, []int64{small, 7}); err == nil {
			t.Errorf("%s: mode 7 accepted", kind)
		}
	}
}
