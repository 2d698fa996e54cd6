package space

import (
	"fmt"

	"github.com/combpred/combpred/core/parallel"
)

// ValidateRows checks m structures stored row-major in ys (m × Width()) and names the first bad row.
func ValidateRows(s Space, ys []int64, m int) error {
	w := s.Width()
	if len(ys) != m*w {
		return fmt.Errorf("structures: expected %d×%d values, got %d", m, w, len(ys))
	}
	for i := 0; i < m; i++ {
		if err := s.Validate(ys[i*w : (i+1)*w]); err != nil {
			return fmt.Errorf("row %d: %w", i, err)
		}
	}
	return nil
}

// EmbedRows writes ψ of m valid structures (ys, m × Width()) into psi (m × Dim()), row-major.
func EmbedRows(s Space, ys []int64, m int, psi []float64) {
	w, d := s.Width(), s.Dim()
	parallel.For(m, 256, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			s.Embed(ys[i*w:(i+1)*w], psi[i*d:(i+1)*d])
		}
	})
}

// DecodeRows decodes m score rows (us, m × Dim()) into structures (ys, m × Width()) on all threads.
func DecodeRows(s Space, us []float64, m int, ys []int64) {
	w, d := s.Width(), s.Dim()
	parallel.For(m, 64, func(lo, hi int) {
		scratch := make([]float64, d)
		for i := lo; i < hi; i++ {
			decodeScaled(s, us[i*d:(i+1)*d], ys[i*w:(i+1)*w], scratch)
		}
	})
}
