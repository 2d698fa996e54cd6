package ridge

import (
	"fmt"
	"slices"

	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/check"
	"github.com/combpred/combpred/core/model"
	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/xmat"
)

// DecodeSource names the vector a model's prediction decodes: the scores u(x) or the centred
// marginal estimates m̂(x) − p (docs/design.md §2a).
type DecodeSource int

const (
	// FromScores decodes argmax_y ⟨u(x), ψ(y)⟩, the thesis' prediction.
	FromScores DecodeSource = iota
	// FromMarginals decodes argmax_y ⟨m̂(x) − p, ψ(y)⟩ at the noise-free scale (Marginals).
	FromMarginals
)

var decodeSourceNames = [...]string{"scores", "marginals"}

// DecodeSourceNames returns the names of the decode sources, in the order of their values.
func DecodeSourceNames() []string { return slices.Clone(decodeSourceNames[:]) }

// ParseDecodeSource maps a decode source's code to it, refusing unknown codes.
func ParseDecodeSource(code int64) (DecodeSource, error) {
	if code < 0 || code >= int64(len(decodeSourceNames)) {
		return 0, fmt.Errorf("decode source code %d is not one of 0..%d (%v)", code, len(decodeSourceNames)-1, decodeSourceNames)
	}
	return DecodeSource(code), nil
}

// MaxMargins writes into out (q × d) the max-marginal margins (space.MaxMarginalMargins) of the
// vector the model decodes for each of the q inputs X (q × n): per coordinate j of ψ, the best
// objective with ψ_j on minus the best with it off, so that its sign agrees with the prediction of
// the same source and its size is a confidence. It needs an exact decoder and stops with
// ErrCancelled once stop is set (nil: never). A chunk of rows is scored at a time.
func (md *Model) MaxMargins(X []float64, q, n int, out []float64, from DecodeSource, stop *cancel.Flag) error {
	if len(X) != q*n {
		return fmt.Errorf("buffer sizes do not match %d rows of %d features", q, n)
	}
	return md.MaxMarginsRows(xmat.DenseRows(X, q, n), out, from, stop)
}

// MaxMarginsRows is MaxMargins on dense or sparse rows.
func (md *Model) MaxMarginsRows(X xmat.Rows, out []float64, from DecodeSource, stop *cancel.Flag) error {
	sp := md.Space
	d, q := sp.Dim(), X.Q
	if err := md.checkFeatures(X.N); err != nil {
		return err
	}
	if len(out) != q*d {
		return fmt.Errorf("buffer sizes do not match %d rows and %d margins", q, d)
	}
	if err := space.CheckDecode(sp, q); err != nil {
		return err
	}
	chunk := max(1, space.PredictChunk(sp, q))
	if err := space.CheckScores(sp, min(chunk, q)); err != nil {
		return err
	}
	var mm *marginalMap
	if from == FromMarginals {
		mm = newMarginalMap(sp, md.ref)
	}
	U := make([]float64, min(chunk, q)*d)
	for lo := 0; lo < q; lo += chunk {
		if err := stop.Err(); err != nil {
			return err
		}
		hi := min(lo+chunk, q)
		Uc := U[:(hi-lo)*d]
		if err := model.ScoreRows(md, X.Slice(lo, hi), Uc, stop); err != nil {
			return check.AtRows(lo, err)
		}
		if mm != nil {
			mm.centreRows(Uc, hi-lo)
		}
		if err := space.MaxMarginalMargins(sp, Uc, hi-lo, md.pins(), out[lo*d:hi*d], stop); err != nil {
			return err
		}
	}
	return nil
}
