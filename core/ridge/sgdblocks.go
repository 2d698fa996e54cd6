package ridge

import (
	"github.com/combpred/combpred/core/gemm"
	"github.com/combpred/combpred/core/parallel"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
)

// plan has the scores of the next epoch's steps, over the examples in order, computed a block at
// a time; with truncation, whose steps drop examples, they stay per step.
func (ks *kernelSGD) plan(order []int) {
	if ks.tau > 0 {
		return
	}
	b := &ks.blk
	b.order, b.pos, b.lo, b.hi = order, 0, 0, 0
}

// blockScores writes the scores of the planned step's example i.
func (ks *kernelSGD) blockScores(i int, u []float64) {
	b := &ks.blk
	if b.pos == b.hi {
		ks.startBlock()
	}
	if b.order[b.pos] != i {
		panic("ridge: kernel SGD stepped out of its planned order")
	}
	d, nb, j := len(u), b.hi-b.lo, b.pos-b.lo
	copy(u, b.u[j*d:(j+1)*d])
	kj := b.kbb[j*nb : (j+1)*nb]
	for _, l := range b.updated {
		floats.AddScaled(u, kj[l], b.dv[l*d:(l+1)*d])
	}
	floats.Scale(ks.scale, u)
}

// startBlock computes the scores at its start and the kernel values among the examples of the
// block that starts at the current step.
func (ks *kernelSGD) startBlock() {
	b := &ks.blk
	b.lo, b.hi = b.pos, min(b.pos+b.size, len(b.order))
	ex := b.order[b.lo:b.hi]
	nb, plus := len(ex), ks.plus()
	b.keys = b.keys[:0]
	for _, i := range ex {
		b.keys = append(b.keys, ks.nOld+i)
	}
	_, d := ks.coef.Dims()
	if len(b.kbb) < nb*nb {
		b.u, b.dv, b.kbb = make([]float64, nb*d), make([]float64, nb*d), make([]float64, nb*nb)
	}
	C := ks.coef.RawMatrix()
	ks.products(b.u[:nb*d], b.keys, blas64.General{Rows: ks.size, Cols: d, Stride: C.Stride, Data: C.Data})
	if ks.inputs == nil {
		for j, i := range ex {
			x := ks.X.RawRowView(i)
			for l, il := range ex[:j] {
				b.kbb[j*nb+l] = x[il] + plus
			}
		}
	} else {
		pad := ks.inputs.RawMatrix().Rows
		for j := range ex {
			kj, xj := b.kbb[j*nb:j*nb+j], b.xb[j*pad:(j+1)*pad]
			for l := range kj {
				kj[l] = floats.Dot(xj, b.xb[l*pad:(l+1)*pad])
			}
			ks.kern.Row(kj, b.bn[j], b.bn, plus)
		}
	}
	b.updated = b.updated[:0]
}

// products sets U (len(keys) × d, row-major) to the scores at the inputs of keys (at most
// blk.size of them) of the expansion over the active slots with coefficients A (a row per slot):
// U = (K + plus)·A for the kernel values K between the keys' inputs and the slots'. It leaves the
// keys' inputs in blk.xb and their squared norms in blk.bn.
//
// The slots are taken sgdChunk at a time, so that a chunk's kernel values are still in cache when
// they are multiplied by its rows of A, and sgdGroup chunks make a group, which has a product of
// its own on one thread; the products of the groups are then added in order, so that the result
// does not depend on the number of threads.
func (ks *kernelSGD) products(U []float64, keys []int, A blas64.General) {
	b := &ks.blk
	nb, e, d, plus := len(keys), ks.size, A.Cols, ks.plus()
	groups := (e + sgdGroup*sgdChunk - 1) / (sgdGroup * sgdChunk)
	var pad int // columns of xb
	if ks.inputs != nil {
		pad = ks.inputs.RawMatrix().Rows
	}
	if len(b.bn) < nb {
		rows, most := max(nb, b.size), (len(ks.keys)+sgdGroup*sgdChunk-1)/(sgdGroup*sgdChunk) // groups at full capacity
		b.k, b.gu = make([]float64, most*rows*sgdChunk), make([]float64, most*rows*d)
		b.bn, b.xb = make([]float64, rows), make([]float64, rows*pad)
	}
	if ks.inputs != nil {
		for j, key := range keys {
			row, norm := ks.input(key)
			copy(b.xb[j*pad:], row) // the padding columns are never written: zero
			b.bn[j] = norm
		}
	}
	parallel.For(groups, 1, func(lo, hi int) {
		for g := lo; g < hi; g++ {
			K := b.k[g*nb*sgdChunk : (g+1)*nb*sgdChunk]
			P := blas64.General{Rows: nb, Cols: d, Stride: d, Data: b.gu[g*nb*d : (g+1)*nb*d]}
			clear(P.Data)
			for s0 := g * sgdGroup * sgdChunk; s0 < min(e, (g+1)*sgdGroup*sgdChunk); s0 += sgdChunk {
				w := min(sgdChunk, e-s0)
				Kc := blas64.General{Rows: nb, Cols: w, Stride: w, Data: K[:nb*w]}
				if ks.inputs == nil {
					for j, key := range keys {
						x := ks.X.RawRowView(key - ks.nOld)
						for s, slotKey := range ks.keys[s0 : s0+w] {
							Kc.Data[j*w+s] = x[slotKey] + plus
						}
					}
				} else {
					in := ks.inputs.RawMatrix()
					gemm.Mul(Kc, blas64.General{Rows: nb, Cols: pad, Stride: pad, Data: b.xb[:nb*pad]},
						blas64.General{Rows: pad, Cols: w, Stride: in.Stride, Data: in.Data[s0:]})
					for j := range keys {
						ks.kern.Row(Kc.Data[j*w:(j+1)*w], b.bn[j], ks.rnorms[s0:s0+w], plus)
					}
				}
				gemm.MulAdd(P, Kc, blas64.General{Rows: w, Cols: d, Stride: A.Stride, Data: A.Data[s0*A.Stride:]})
			}
		}
	})
	clear(U)
	for g := 0; g < groups; g++ {
		floats.Add(U, b.gu[g*nb*d:(g+1)*nb*d])
	}
}
