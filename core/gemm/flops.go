package gemm

import "sync/atomic"

// flops counts the floating-point operations of every product since the process started.
var flops atomic.Uint64

// Flops returns the floating-point operations of the products computed by this package since the
// process started, 2·q·p·m for a q×p by p×m product (a fused multiply–add counts two): the dense
// arithmetic of the solvers, not their kernel functions, row operations or decoders. Benchmarks
// read it around a fit to report the rate it achieved. The counter is shared by every goroutine,
// so concurrent fits add to the same total.
func Flops() uint64 { return flops.Load() }

// count adds the operations of a q×p by p×m product.
func count(q, p, m int) {
	if q > 0 && p > 0 && m > 0 {
		flops.Add(2 * uint64(q) * uint64(p) * uint64(m))
	}
}

// countUpper adds the operations of the entries on and above the diagonal of a q×p by p×m
// product whose columns are those from diag on of a larger square one (MulTNUpperAdd): the
// entries the product needs, not those of the blocks its kernels compute whole.
func countUpper(q, p, m, diag int) {
	var entries uint64
	for i := 0; i < q; i++ {
		entries += uint64(min(max(diag+m-i, 0), m))
	}
	flops.Add(2 * entries * uint64(p))
}
