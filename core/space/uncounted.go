package space

import "errors"

// ErrUncounted is wrapped by Counts for spaces without a counting formula.
var ErrUncounted = errors.New("space: no counting formula")

// Uncounted is implemented by spaces whose size, uniform moments and uniform sampler are not known
// (counting their structures is #P-hard): their LogCount is +Inf, Mean and Covariance hold NaN
// and Sample panics, so every caller that needs them checks Counts first. They still validate,
// embed and decode, which is all that a reference measure built from the training structures
// needs (StructuredRidge with empirical_weight = 1).
type Uncounted interface {
	// Uncounted says why the space cannot be counted, and what works instead.
	Uncounted() string
}

// Counts returns nil when s knows |Y|, p and S under the uniform distribution and can sample it,
// and otherwise an error wrapping ErrUncounted that says why and what works instead.
func Counts(s Space) error {
	if u, ok := s.(Uncounted); ok {
		return uncountedError(u.Uncounted())
	}
	return nil
}

// uncountedError is the space's own explanation, which names what it lacks: errors.Join put
// ErrUncounted's text before it on a line of its own, and users read "space: no counting formula"
// and a line break in the middle of messages.
type uncountedError string

func (e uncountedError) Error() string { return string(e) }
func (e uncountedError) Unwrap() error { return ErrUncounted }
