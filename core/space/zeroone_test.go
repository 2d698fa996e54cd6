package space

import (
	"math/rand/v2"
	"testing"
)

// TestZeroOneByEnumeration checks IsZeroOne against every ψ of a small instance of each space.
func TestZeroOneByEnumeration(t *testing.T) {
	mk := func(s Space, err error) Space {
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, sp := range []Space{
		mk(NewMulticlass(3)), mk(NewMultilabel(3)), mk(NewKSubsets(5, 2)), mk(NewOrdinal(4)),
		mk(NewHierarchyPaths([]int{-1, 0, 0, 1}, false)), mk(NewHierarchyPaths([]int{-1, 0, 0, 1}, true)),
		mk(NewDAGPaths([][]int{nil, {0}, {0}, {1, 2}}, false)), mk(NewDAGSubsets([][]int{nil, {0}, {0}, {1, 2}})),
		mk(NewSubtrees([]int{-1, 0, 0, 1})), mk(NewTournaments(4)), mk(NewPermutations(4)),
		mk(NewDirectedCycles(4)), mk(NewUndirectedCycles(5)), mk(NewCliques(4)),
	} {
		psi := make([]float64, sp.Dim())
		zeroOne, constantNorm, norm := true, true, -1.0
		visit := func(y []int64) bool {
			sp.Embed(y, psi)
			sq := 0.0
			for _, v := range psi {
				zeroOne = zeroOne && (v == 0 || v == 1)
				sq += v * v
			}
			constantNorm = constantNorm && (norm < 0 || sq == norm)
			norm = sq
			return true
		}
		if err := sp.Enumerate(visit); err != nil {
			// DAG node sets are not counted, nor listed: the structures that random scores decode to
			r := rand.New(rand.NewPCG(1, 2))
			u, y := make([]float64, sp.Dim()), make([]int64, sp.Width())
			for range 200 {
				for j := range u {
					u[j] = r.NormFloat64()
				}
				sp.Decode(u, y)
				visit(y)
			}
		}
		if got := IsZeroOne(sp); got != zeroOne {
			t.Errorf("%s%v: IsZeroOne = %v, enumeration says %v", sp.Kind(), sp.Params(), got, zeroOne)
		}
		// a 0/1 space of constant norm (classes, k-subsets) need not say so: the indicator suffices
		if got := IsConstantNorm(sp); got != (constantNorm && !zeroOne) {
			t.Errorf("%s%v: IsConstantNorm = %v, enumeration says %v (0/1: %v)", sp.Kind(), sp.Params(), got, constantNorm, zeroOne)
		}
	}
}
