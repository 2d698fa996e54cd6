// Package check holds input checks shared by the core and the C ABI.
package check

import (
	"fmt"
	"math"
)

// Finite names the first NaN or infinite entry of the row-major matrix x with cols columns.
func Finite(name string, x []float64, cols int) error {
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%s[%d, %d] = %v: values must be finite", name, i/cols, i%cols, v)
		}
	}
	return nil
}
