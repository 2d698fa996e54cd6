package space

// Partition is implemented by spaces that compute the log-partition function
//
//	log Z(u) = log Σ_y exp⟨u, ψ(y)⟩
//
// and the marginals E[ψ] of p(y) ∝ exp⟨u, ψ(y)⟩ exactly, by a dynamic programme or a closed form,
// without enumerating Y. These are the sum-product counterparts of the exact decoders, which solve
// max_y ⟨u, ψ(y)⟩ with the same recursions in the (max, +) semiring.
type Partition interface {
	// HasPartition reports whether LogPartition is available at this space's size: a programme
	// exponential in a size parameter is offered only up to a limit.
	HasPartition() bool
	// LogPartition returns log Z(u) and writes E[ψ] into mean unless mean is nil. u holds Dim()
	// finite scores. It is safe for concurrent use.
	LogPartition(u, mean []float64) float64
}

// PartitionOf returns the exact inference of s when s has one at its size.
func PartitionOf(s Space) (Partition, bool) {
	p, ok := s.(Partition)
	if !ok || !p.HasPartition() {
		return nil, false
	}
	return p, true
}

// LogZ is implemented by spaces that compute log Z alone exactly beyond the sizes of their
// Partition (without E[ψ], whose backward programme the fits and marginals also need): the
// log-partition function and log-likelihoods of a model, at a cost exponential in the size.
type LogZ interface {
	// HasLogZ reports whether LogZ is available at this space's size.
	HasLogZ() bool
	// LogZ returns log Z(u) for Dim() finite scores u. It is safe for concurrent use.
	LogZ(u []float64) float64
}

// LogZOf returns the exact log Z of s beyond its Partition, when s has one at its size.
func LogZOf(s Space) (LogZ, bool) {
	z, ok := s.(LogZ)
	if !ok || !z.HasLogZ() {
		return nil, false
	}
	return z, true
}

// PartitionMemory is implemented by partitions whose LogPartition allocates more than O(Dim())
// per call: the bytes, so that callers check them against the memory budget first.
type PartitionMemory interface {
	PartitionBytes() int64
}

// ScaleExactPartition is implemented by spaces whose LogPartition keeps E[ψ] accurate however
// large the scores: every structure scores one coordinate of u, and each marginal is a ratio of
// terms that share their largest exponent (a logistic function of a score, a softmax). Everywhere
// else a structure's score is a sum, and a sum whose large terms cancel loses what the small ones
// add (ordinal levels, root paths and subtrees too, whose upward messages sum their children's),
// and the programmes add and subtract log-domain sums of size ‖u‖₁: each probability carries an
// error of about ‖u‖₁·2⁻⁵², and callers bound ‖u‖₁ (package prob's exactScoreLimit).
type ScaleExactPartition interface {
	Partition
	PartitionScaleExact()
}
