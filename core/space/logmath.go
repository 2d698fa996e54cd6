package space

import (
	"math"

	"github.com/combpred/combpred/core/logmath"
)

// logBinomial returns log C(n, k), the natural logarithm of a binomial coefficient, for
// 0 ≤ k ≤ n. It stays finite where C(n, k) overflows a float64.
func logBinomial(n, k int) float64 {
	if k < 0 || k > n {
		return math.Inf(-1)
	}
	if k > n-k {
		k = n - k
	}
	if k == 0 {
		return 0
	}
	if k <= 16 {
		// Few factors: the product formula is exact up to rounding of each term.
		var s float64
		for i := 1; i <= k; i++ {
			s += logmath.Log(float64(n-k+i) / float64(i))
		}
		return s
	}
	a, _ := math.Lgamma(float64(n) + 1)
	b, _ := math.Lgamma(float64(k) + 1)
	c, _ := math.Lgamma(float64(n-k) + 1)
	return a - b - c
}
