package space

import "github.com/combpred/combpred/core/cancel"

// MaxMarginalMarginsByDecoding is MaxMarginalMargins by 2·Dim() decodes per row even for a space
// with a dynamic programme, so that the tests compare the two.
func MaxMarginalMarginsByDecoding(s Space, us []float64, m int, pins []Pin, out []float64, stop *cancel.Flag) error {
	return maxMarginalMargins(s, nil, us, m, pins, out, stop)
}

// HasMaxMarginProgramme reports whether s computes its margins by a dynamic programme.
func HasMaxMarginProgramme(s Space) bool { _, ok := s.(maxMarginer); return ok }
