package prob

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/xmat"
	"gonum.org/v1/gonum/mat"
)

// TestSamplersStopWithinADecode: on UndirectedCycles(1000) one decode is a local search of about
// 2.7 s, and a sample, a Taylor bound or an FPRAS estimate starts with two or three of them (the
// score range of CFTP and Taylor, the chain's start, the FPRAS's mode). A stop set 100 ms into
// the call now ends the search under way after its pass: each call returns ErrCancelled well
// within a second, where it ran 5–8 s, and not another error.
func TestSamplersStopWithinADecode(t *testing.T) {
	sp := mustSpace(t, "ucycles", 1000)
	u := randomScores(rand.New(rand.NewPCG(1, 2)), sp.Dim(), 30)
	out := make([]int64, sp.Width())
	for name, call := range map[string]func(stop *cancel.Flag) error{
		"sample auto": func(stop *cancel.Flag) error {
			_, err := Sample(sp, u, 1, 1, SampleOptions{Sampler: SamplerAuto, Stop: stop}, out)
			return err
		},
		// near-uniform scores, where auto takes CFTP once its decodes end: a stop during them left
		// auto choosing a chain, whose own checks (the work bound of 3000 samples, check_mixing's
		// n_samples ≥ 80) answered instead of the interrupt (review)
		"sample auto, 3000": func(stop *cancel.Flag) error {
			small := scaled(u, 0.01/30)
			_, err := Sample(sp, small, 3000, 1, SampleOptions{Sampler: SamplerAuto, Stop: stop}, make([]int64, 3000*sp.Width()))
			return err
		},
		"sample rows auto, check_mixing": func(stop *cancel.Flag) error {
			md := &Model{Space: sp, Coef: mat.NewDense(1, sp.Dim(), scaled(u, 0.01/30)), NFeatures: 1}
			q, count := 2, 10
			return md.SampleRows(xmat.DenseRows([]float64{1, 1}, q, 1), count, 1, SampleOptions{Sampler: SamplerAuto, Stop: stop},
				true, make([]int64, q*count*sp.Width()), nil)
		},
		"sample chain": func(stop *cancel.Flag) error {
			_, err := Sample(sp, u, 1, 1, SampleOptions{Sampler: SamplerChain, Stop: stop}, out)
			return err
		},
		"taylor": func(stop *cancel.Flag) error {
			_, err := LogPartition(sp, u, LogZOptions{Method: LogZTaylor, Sampler: SampleOptions{Stop: stop}})
			return err
		},
		"fpras": func(stop *cancel.Flag) error {
			_, err := LogPartition(sp, u, LogZOptions{Method: LogZFPRAS, Eps: 0.5, Delta: 0.5, Sampler: SampleOptions{Sampler: SamplerAuto, Stop: stop}})
			return err
		},
	} {
		stop := &cancel.Flag{}
		time.AfterFunc(100*time.Millisecond, stop.Stop)
		start := time.Now()
		err := call(stop)
		el := time.Since(start)
		if !errors.Is(err, cancel.ErrCancelled) {
			t.Errorf("%s: error %v after %v, want ErrCancelled", name, err, el)
		}
		if el > time.Second {
			t.Errorf("%s: stopping took %v", name, el)
		}
	}
}
