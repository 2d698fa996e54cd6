package ridge

import "sync"

// scratchPool recycles the buffers a fit makes and drops at its end, whose every entry it writes
// before reading: a linear CG fit's copies of X (centred, then in the order of its label-set
// groups) and a kernel fit's m×m Gram matrix and dual factor. A fresh buffer is zeroed and
// faulted in page by page: 0.6 ms of a yeast-sized linear fit of 8.7 ms for the copies (1.2 MB),
// 36 MB for the kernel fit's two matrices, which every fit of a cross-validation repeats.
var scratchPool sync.Pool // of *[]float64

// scratchFloats returns n float64s whose values are unspecified: the caller writes every one.
func scratchFloats(n int) []float64 {
	if b, ok := scratchPool.Get().(*[]float64); ok && cap(*b) >= n {
		return (*b)[:n]
	}
	return make([]float64, n)
}

// releaseFloats hands a buffer from scratchFloats back; nothing may read or write it after.
func releaseFloats(b []float64) {
	if cap(b) > 0 {
		scratchPool.Put(&b)
	}
}
