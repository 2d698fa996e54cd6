package kernel

import "fmt"

// MaxRoundingError is the largest relative error of rbf kernel values a fit accepts without a
// warning (PrecisionWarning): about the default tolerance of the fits.
const MaxRoundingError = 1e-6

// RoundingError bounds, to within a small factor, the relative error of the rbf kernel values
// exp(−γ‖a − b‖²) on inputs whose largest squared norm is norm2: ‖a − b‖² is formed as
// ‖a‖² + ‖b‖² − 2⟨a, b⟩, which keeps the products' speed and, like scikit-learn's euclidean_distances,
// loses its digits to cancellation where the inputs lie far from the origin against their
// spread: the distance carries an error of about 2⁻⁵²·norm2, the kernel γ times that. It is 0 for
// the other kernels.
func (k Kernel) RoundingError(norm2 float64) float64 {
	if k.Kind != RBF {
		return 0
	}
	return k.Gamma * norm2 * 0x1p-52
}

// PrecisionWarning is the warning a fit on inputs of largest squared norm norm2 gives when
// RoundingError exceeds MaxRoundingError, "" otherwise. X + 1e7 (rbf, gamma 0.5) moved a model's
// scores by 0.23, and gamma = 1e20 left k(x, x) at 0 instead of 1, without a word (probe CG).
func (k Kernel) PrecisionWarning(norm2 float64) string {
	loss := k.RoundingError(norm2)
	if !(loss > MaxRoundingError) {
		return ""
	}
	return fmt.Sprintf("kernel='rbf' loses precision on these inputs: its values are computed from ‖a‖² + ‖b‖² − 2⟨a, b⟩ "+
		"(as scikit-learn computes them), with a relative error of about gamma · max‖x‖² · 2⁻⁵² = %.2g (gamma=%g, largest "+
		"‖x‖² = %.3g), which the model inherits; centre X (StandardScaler; the rbf kernel is translation invariant) or lower gamma",
		loss, k.Gamma, norm2)
}
