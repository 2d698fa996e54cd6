package main

/*
#include <stdint.h>
#include <stdlib.h>
#include "cp_helpers.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/combpred/combpred/core/budget"
	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/check"
	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/floats"
)

// inlineSpaceParams is the number of parameters up to which cp_space_new builds the space inline,
// where Ctrl-C cannot reach it: a DAG of at most this many parameters builds its ancestor sets in
// milliseconds, one of 22,000 nodes with 100 parents each in 30 s (probe CV).
const inlineSpaceParams = 1 << 12

// cp_space_new builds the space of the registered kind with its nparams integer parameters and
// writes its handle into out. A space of more than 4,096 parameters (a large DAG, whose ancestor
// sets can take seconds) is built cancellably, through the interrupt poll.
//
//export cp_space_new
func cp_space_new(kind *C.char, params *C.int64_t, nparams C.int64_t, out *C.int64_t) (rc C.int) {
	defer guard(&rc)
	if kind == nil {
		return status(errors.New("space kind is a NULL pointer"))
	}
	if nparams > 1<<24 {
		return status(errors.New("too many space parameters"))
	}
	p, err := i64s("space parameters", params, nparams)
	if err == nil {
		err = outPtr("handle", out)
	}
	if err != nil {
		return status(err)
	}
	// A DAG space refused at its ancestry bound has built up to a gigabyte of ancestor sets first:
	// that memory goes back to the system once the process is idle, not minutes later.
	defer releaseAfter(heapAllocs())
	name, err := goName(kind, "kind")
	if err != nil {
		return status(err)
	}
	ps := append([]int64(nil), p...)
	var sp space.Space
	err = cancellable(len(ps) <= inlineSpaceParams, func(stop *cancel.Flag) error {
		var err error
		sp, err = space.NewUntil(name, ps, stop)
		return err
	})
	if err != nil {
		return status(err)
	}
	*out = C.int64_t(newHandle(sp))
	return cpOK
}

// cp_space_free releases a space handle; models that use the space keep it alive.
//
//export cp_space_free
func cp_space_free(h C.int64_t) (rc C.int) {
	defer guard(&rc)
	return status(freeHandle(int64(h), "space"))
}

// cp_space_mean writes p = Ψ/|Y|, the mean of ψ under the uniform distribution (d values).
//
//export cp_space_mean
func cp_space_mean(h C.int64_t, out *C.double, d C.int64_t) (rc C.int) {
	defer guard(&rc)
	sp, err := spaceWithDim(h, d, "mean: output", "entries")
	if err == nil {
		err = space.Counts(sp)
	}
	if err != nil {
		return status(err)
	}
	buf, err := f64s("mean output", out, d)
	if err != nil {
		return status(err)
	}
	sp.Mean(buf)
	return cpOK
}

// maxDenseCov bounds the dense covariance that cp_space_covariance writes (d² doubles).
const maxDenseCov = 8192

// denseCovAllowed says why the dense covariance of sp may not be written: above maxDenseCov, or
// above the memory budget.
func denseCovAllowed(sp space.Space) error {
	if err := space.Counts(sp); err != nil {
		return err
	}
	d := sp.Dim()
	if d > maxDenseCov {
		// in floating point: past n = 46,341 permutations, d²·8 overflowed int64 and the message
		// gave 2⁶³ − 1 bytes (probe DS)
		return fmt.Errorf("covariance: d = %d is too large for a dense matrix (d×d needs %.3g bytes; at most d = %d): use covariance_dot",
			d, 8*float64(d)*float64(d), maxDenseCov)
	}
	return budget.Check(fmt.Sprintf("covariance: the dense %d×%d matrix of the %s space", d, d, sp.Kind()), budget.Floats(d, d))
}

// cp_space_covariance_check refuses, as cp_space_covariance would, a dense covariance that is not
// allowed, so that the caller can ask before it allocates the output.
//
//export cp_space_covariance_check
func cp_space_covariance_check(h C.int64_t) (rc C.int) {
	defer guard(&rc)
	sp, err := spaceOf(int64(h))
	if err != nil {
		return status(err)
	}
	return status(denseCovAllowed(sp))
}

// cp_space_covariance writes the dense d×d covariance S of ψ under the uniform distribution; see
// cp_space_covariance_check for the sizes it refuses.
//
//export cp_space_covariance
func cp_space_covariance(h C.int64_t, out *C.double, d C.int64_t) (rc C.int) {
	defer guard(&rc)
	sp, err := spaceWithDim(h, d, "covariance: output", "rows")
	if err != nil {
		return status(err)
	}
	if err := denseCovAllowed(sp); err != nil {
		return status(err)
	}
	buf, err := f64s("covariance output", out, d, d)
	if err != nil {
		return status(err)
	}
	op := sp.Covariance()
	n := int(d)
	// an entry can cost a walk over a descendant set (a DAG's paths: 6 s for 1,000 nodes of 100
	// parents each, deaf to Ctrl-C, probe CW): beyond a small matrix the rows look at the stop flag
	return status(cancellable(n <= smallQuery, func(stop *cancel.Flag) error {
		for i := 0; i < n; i++ {
			if stop.Stopped() {
				return stop.Err()
			}
			for j := 0; j < n; j++ {
				buf[i*n+j] = op.At(i, j)
			}
		}
		return nil
	}))
}

// cp_space_cov_mul writes S·v into out (d values) without forming S.
//
//export cp_space_cov_mul
func cp_space_cov_mul(h C.int64_t, v *C.double, out *C.double, d C.int64_t) (rc C.int) {
	defer guard(&rc)
	sp, err := spaceWithDim(h, d, "cov_mul: vector", "entries")
	if err == nil {
		err = space.Counts(sp)
	}
	if err != nil {
		return status(err)
	}
	in, err := f64s("v", v, d)
	if err != nil {
		return status(err)
	}
	dst, err := f64s("output", out, d)
	if err != nil {
		return status(err)
	}
	if err := check.FiniteVector("v", in); err != nil {
		return status(err)
	}
	// S·v is linear in v: taken of v scaled by a power of two to about 1 and scaled back (both
	// exact), so that the sums on the way to it cannot overflow where S·v does not (pᵀv of
	// [1e308, 1e308, 0] made S·v[0] NaN where it is 2.5e307, probe DZ)
	top := floats.Norm(in, math.Inf(1))
	_, e := math.Frexp(top)
	scaled := append([]float64(nil), in...)
	if e > 0 {
		for i, x := range scaled {
			scaled[i] = math.Ldexp(x, -e)
		}
	}
	sp.Covariance().MulVec(dst, scaled)
	if e > 0 {
		for i, x := range dst {
			dst[i] = math.Ldexp(x, e) // not × 2^e, which overflows at e = 1024
		}
	}
	// S's entries are at most max‖ψ‖² in size, so only a v near the float64 range overflows
	if check.FiniteVector("S·v", dst) != nil {
		return status(fmt.Errorf("S·v overflows float64 (v's largest |value| is %g): scale v down", top))
	}
	return cpOK
}

// rowsOf checks that a structure array has the space's width.
func rowsOf(sp space.Space, name string, p *C.int64_t, m, w C.int64_t) ([]int64, error) {
	if int64(w) != int64(sp.Width()) {
		return nil, fmt.Errorf("%s has %d columns, the space encodes a structure in %d", name, int64(w), sp.Width())
	}
	return i64s(name, p, m, w)
}

// cp_space_validate checks m structures (m × w) and names the first invalid row, counting the
// rows from first (a block of a larger Y, such as a Dask partition, names the rows of the whole)
// and naming the array as name (NUL-terminated; NULL or empty: Y), as in "Y_true: row 3: …".
//
//export cp_space_validate
func cp_space_validate(h C.int64_t, ys *C.int64_t, m, w, first C.int64_t, name *C.char) (rc C.int) {
	defer guard(&rc)
	sp, err := spaceOf(int64(h))
	if err != nil {
		return status(err)
	}
	arg, err := goName(name, "name")
	if err != nil {
		return status(err)
	}
	if arg == "" {
		arg = "Y"
	}
	y, err := rowsOf(sp, arg, ys, m, w)
	if err == nil && (first < 0 || int64(first) > math.MaxInt64-int64(m)) {
		err = fmt.Errorf("first row %d is out of range", int64(first))
	}
	if err != nil {
		return status(err)
	}
	return status(space.ValidateNamedRows(sp, y, int(m), int(first), arg))
}

// cp_space_embed writes ψ of m valid structures (m × w) into out (m × d); cancellable through
// the interrupt poll.
//
//export cp_space_embed
func cp_space_embed(h C.int64_t, ys *C.int64_t, m, w C.int64_t, out *C.double, d C.int64_t) (rc C.int) {
	defer guard(&rc)
	sp, err := spaceWithDim(h, d, "embed: output", "columns")
	if err != nil {
		return status(err)
	}
	y, err := rowsOf(sp, "Y", ys, m, w)
	if err != nil {
		return status(err)
	}
	psi, err := f64s("embed output", out, m, d)
	if err != nil {
		return status(err)
	}
	if err := disjoint(inputOf("Y", y), outputOf("embed output", psi)); err != nil {
		return status(err)
	}
	if err := space.ValidateNamedRows(sp, y, int(m), 0, "Y"); err != nil {
		return status(err)
	}
	return status(cancellable(int64(m) <= inlineRows(float64(sp.Dim())), func(stop *cancel.Flag) error {
		return space.EmbedRowsUntil(sp, y, int(m), psi, stop)
	}))
}

// cp_space_sample draws n uniform structures, determined by seed, into out (n × w); cancellable
// through the interrupt poll.
//
//export cp_space_sample
func cp_space_sample(h C.int64_t, n C.int64_t, seed C.uint64_t, out *C.int64_t, w C.int64_t) (rc C.int) {
	defer guard(&rc)
	sp, err := spaceOf(int64(h))
	if err == nil {
		err = space.Counts(sp)
	}
	if err != nil {
		return status(err)
	}
	y, err := rowsOf(sp, "sample output", out, n, w)
	if err != nil {
		return status(err)
	}
	r := rand.New(rand.NewPCG(uint64(seed), 0x636f6d6270726564))
	width := int(w)
	work := sampleWork(sp)
	every := max(1, int(space.StopWork/work)) // samples between two looks at the stop flag
	return status(cancellable(int64(n) <= inlineRows(work), func(stop *cancel.Flag) error {
		for i := 0; i < int(n); i++ {
			if i%every == 0 && stop.Stopped() {
				return cancel.ErrCancelled
			}
			sp.Sample(r, y[i*width:(i+1)*width])
		}
		return nil
	}))
}

// sampleWork estimates the work of one uniform sample of sp in the units of inlineWork: the
// samplers run in time linear in the space's dimension and width, at up to about 25 ns an entry
// (Subtrees on a tree of 200,000 nodes: 5 ms a sample). Counting samples instead ran 200 samples of
// a tree of 10⁶ nodes inline (7 s) and checked the stop flag every 4,096 (minutes), deaf to Ctrl-C
// (probe CW).
func sampleWork(sp space.Space) float64 { return 32 * float64(sp.Dim()+sp.Width()) }

// cp_space_decode writes argmax_y ⟨u, ψ(y)⟩ (exact, or within the decoder's guarantee) of m score
// rows (m × d) into out (m × w); cancellable through the interrupt poll.
//
//export cp_space_decode
func cp_space_decode(h C.int64_t, us *C.double, m, d C.int64_t, out *C.int64_t, w C.int64_t) (rc C.int) {
	defer guard(&rc)
	sp, u, err := scoreRows(h, us, m, d, "decode: scores")
	if err != nil {
		return status(err)
	}
	y, err := rowsOf(sp, "decode output", out, m, w)
	if err != nil {
		return status(err)
	}
	if err := disjoint(inputOf("scores", u), outputOf("decode output", y)); err != nil {
		return status(err)
	}
	return status(cancellable(int64(m) <= inlineRows(space.DecodeWork(sp)), func(stop *cancel.Flag) error { return space.DecodeRows(sp, u, int(m), y, stop) }))
}

// scoreRows resolves the space of handle h and its m finite score rows (m × d) for decoding,
// checking the decoders' scratch against the memory budget; what names the call in errors.
func scoreRows(h C.int64_t, us *C.double, m, d C.int64_t, what string) (space.Space, []float64, error) {
	sp, err := spaceWithDim(h, d, what, "columns")
	if err != nil {
		return nil, nil, err
	}
	u, err := f64s("scores", us, m, d)
	if err != nil {
		return nil, nil, err
	}
	if err := check.Finite("scores", u, int(d)); err != nil {
		return nil, nil, err
	}
	if err := space.CheckDecode(sp, int(m)); err != nil {
		return nil, nil, err
	}
	return sp, u, nil
}

// cp_space_max_margins writes the max-marginal margin of every coordinate of ψ for m score rows
// (m × d) into out (m × d): the best score with ψ_j on minus the best with it off, ±Inf for
// coordinates constant over Y. It needs an exact decoder; cancellable through the interrupt poll.
//
//export cp_space_max_margins
func cp_space_max_margins(h C.int64_t, us *C.double, m, d C.int64_t, out *C.double) (rc C.int) {
	defer guard(&rc)
	sp, u, err := scoreRows(h, us, m, d, "max margins: scores")
	if err != nil {
		return status(err)
	}
	margins, err := f64s("max margins output", out, m, d)
	if err == nil {
		err = disjoint(inputOf("scores", u), outputOf("max margins output", margins))
	}
	if err != nil {
		return status(err)
	}
	return status(cancellable(false, func(stop *cancel.Flag) error { return space.MaxMarginalMargins(sp, u, int(m), nil, margins, stop) }))
}

// cp_space_enumerate writes every structure (for tests; refused beyond 2²² structures or 2²⁶
// values) into out, which holds capacity rows, and their number into count; call it with capacity
// 0 to learn the count.
//
//export cp_space_enumerate
func cp_space_enumerate(h C.int64_t, out *C.int64_t, capacity C.int64_t, w C.int64_t, count *C.int64_t) (rc C.int) {
	defer guard(&rc)
	sp, err := spaceOf(int64(h))
	if err == nil {
		err = space.Counts(sp)
	}
	if err == nil {
		err = outPtr("count", count)
	}
	if err != nil {
		return status(err)
	}
	if space.Enumerable(sp) != nil {
		return status(fmt.Errorf("enumerate: the space has more than %d structures or %d values in all (structures × width %d)",
			space.MaxEnumerate, space.MaxEnumerateValues, sp.Width()))
	}
	y, err := rowsOf(sp, "enumerate output", out, capacity, w)
	if err != nil {
		return status(err)
	}
	width, k := int(w), 0
	err = sp.Enumerate(func(s []int64) bool {
		if k < int(capacity) {
			copy(y[k*width:(k+1)*width], s)
		}
		k++
		return true
	})
	if err != nil {
		return status(fmt.Errorf("enumerate: the space has more than %d structures", space.MaxEnumerate))
	}
	*count = C.int64_t(k)
	return cpOK
}

// spaceWithDim returns the space of handle h after checking that the caller's d, the length of an
// argument (what, counted in unit), is the space's dimension.
func spaceWithDim(h, d C.int64_t, what, unit string) (space.Space, error) {
	sp, err := spaceOf(int64(h))
	if err != nil {
		return nil, err
	}
	if int64(d) != int64(sp.Dim()) {
		return nil, fmt.Errorf("%s has %d %s, the space has dimension %d", what, int64(d), unit, sp.Dim())
	}
	return sp, nil
}
