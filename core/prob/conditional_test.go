package prob

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// pairedStructure returns σ_ab(y) by its definition in conditioning, built directly on the
// structure: permutations exchange the ranks of a and b; directed cycles exchange a and b when
// one is the successor of the other (y unchanged otherwise).
func pairedStructure(kind string, y []int64, a, b int) []int64 {
	z := slices.Clone(y)
	switch kind {
	case "permutations":
		z[a], z[b] = y[b], y[a]
	case "dicycles":
		if y[b] == int64(a) {
			a, b = b, a
		}
		if y[a] != int64(b) {
			return z
		}
		// p→a→b→q becomes p→b→a→q.
		p := slices.Index(y, int64(a))
		z[p], z[b], z[a] = int64(b), int64(a), y[b]
	}
	return z
}

// TestConditioningByEnumeration: on every structure of small spaces, the conditioned ψ equals the
// mean of ψ over the structure's pair {y, σ_j(y)} under π, built from its definition; its
// π-average is E_π[ψ] exactly; and no coordinate's variance grows (the total drops unless π is
// nearly a point mass).
func TestConditioningByEnumeration(t *testing.T) {
	for _, tc := range []struct {
		kind string
		n    int64
	}{{"permutations", 3}, {"permutations", 5}, {"dicycles", 3}, {"dicycles", 4}, {"dicycles", 5}} {
		for _, norm := range []float64{0.3, 3, 40} {
			t.Run(fmt.Sprintf("%s%d/%g", tc.kind, tc.n, norm), func(t *testing.T) {
				sp := mustSpace(t, tc.kind, tc.n)
				n, d := int(tc.n), sp.Dim()
				u := randomScores(rand.New(rand.NewPCG(uint64(tc.n), uint64(norm*10))), d, norm)
				e := newExactDist(t, sp, u)
				newCond := newConditioning(sp, u)
				if newCond == nil {
					t.Fatal("no conditioning")
				}
				cond := newCond()
				mean := make([]float64, d)
				var varH, varPsi float64
				secondH, secondPsi := make([]float64, d), make([]float64, d)
				h := make([]float64, d)
				zpsi := make([]float64, d)
				for s, y := range e.b.Ys {
					copy(h, e.b.Psis[s])
					cond.condition(slices.Clone(y), h)
					// The definition: for the coordinate of a < b, the π-weighted mean of ψ_ab
					// over {y, σ_ab(y)}.
					for a := 0; a < n; a++ {
						for b := a + 1; b < n; b++ {
							k := pairIndex(n, a, b)
							z := pairedStructure(tc.kind, y, a, b)
							sp.Embed(z, zpsi)
							pz := e.pi[e.stateOf(t, z)]
							want := e.b.Psis[s][k]
							if !slices.Equal(z, y) {
								want = (e.pi[s]*e.b.Psis[s][k] + pz*zpsi[k]) / (e.pi[s] + pz)
							}
							if math.Abs(h[k]-want) > 1e-12 {
								t.Fatalf("y %v, pair (%d, %d): conditioned %.15g, pair mean %.15g", y, a, b, h[k], want)
							}
						}
					}
					for j := range h {
						mean[j] += e.pi[s] * h[j]
						secondH[j] += e.pi[s] * h[j] * h[j]
						secondPsi[j] += e.pi[s] * e.b.Psis[s][j] * e.b.Psis[s][j]
					}
				}
				for j := range mean {
					if math.Abs(mean[j]-e.mean[j]) > 1e-12 {
						t.Fatalf("coordinate %d: E[h] = %.15g, E[ψ] = %.15g", j, mean[j], e.mean[j])
					}
					vh, vp := secondH[j]-mean[j]*mean[j], secondPsi[j]-mean[j]*mean[j]
					if vh > vp+1e-12 {
						t.Fatalf("coordinate %d: Var h = %.6g above Var ψ = %.6g", j, vh, vp)
					}
					varH += vh
					varPsi += vp
				}
				t.Logf("Σ Var h / Σ Var ψ = %.3f", varH/varPsi)
				// At norm 40 π is nearly a point mass and within-pair variance nearly nil.
				if norm <= 3 && !(varH < 0.99*varPsi) {
					t.Errorf("Σ Var h = %.6g, Σ Var ψ = %.6g: no reduction", varH, varPsi)
				}
			})
		}
	}
}

// TestConditionedSampledMarginals: sampled marginals with conditioning are unbiased (their mean
// over seeds is within 4 standard errors of the exact marginals) and spread less over seeds than
// plain means of the same samples, for exact (CFTP) and chain samples.
func TestConditionedSampledMarginals(t *testing.T) {
	for _, tc := range []struct {
		kind    string
		n       int64
		sampler SampleOptions
	}{
		{"permutations", 6, SampleOptions{Sampler: SamplerCFTP}},
		{"permutations", 7, SampleOptions{Sampler: SamplerChain, Chain: ChainLocal}},
		{"dicycles", 6, SampleOptions{Sampler: SamplerCFTP}},
		{"dicycles", 7, SampleOptions{Sampler: SamplerChain, Chain: ChainLocal}},
	} {
		t.Run(fmt.Sprintf("%s%d/%v", tc.kind, tc.n, tc.sampler.Sampler), func(t *testing.T) {
			sp := mustSpace(t, tc.kind, tc.n)
			d := sp.Dim()
			u := randomScores(rand.New(rand.NewPCG(3, uint64(tc.n))), d, 3)
			exact := make([]float64, d)
			if _, err := ExactMarginals(sp, u, exact); err != nil {
				t.Fatal(err)
			}
			seeds := 200
			if testing.Short() { // the race detector's run: fewer seeds, the same (looser) bounds
				seeds = 60
			}
			var spread [2]float64
			for k, plain := range []bool{true, false} {
				inf := InferenceOptions{Method: InferSampled, Samples: 30, Sampler: tc.sampler, PlainMeans: plain}
				means := make([][]float64, seeds)
				for s := range means {
					means[s] = make([]float64, d)
					if _, err := Marginals(sp, u, inf, uint64(s), means[s]); err != nil {
						t.Fatal(err)
					}
				}
				spread[k] = traceVariance(means)
				for j := range exact {
					var m, sq float64
					for _, x := range means {
						m += x[j] / float64(seeds)
						sq += x[j] * x[j] / float64(seeds)
					}
					se := math.Sqrt(max(sq-m*m, 0) / float64(seeds))
					if math.Abs(m-exact[j]) > 4*se+1e-9 {
						t.Errorf("plain %v, coordinate %d: mean over seeds %.4f ± %.4f, exact %.4f", plain, j, m, se, exact[j])
					}
				}
			}
			t.Logf("tr Cov: plain %.4f, conditioned %.4f (ratio %.2f)", spread[0], spread[1], spread[1]/spread[0])
			if !(spread[1] < 0.8*spread[0]) {
				t.Errorf("tr Cov of the conditioned means %.4f, of plain means %.4f", spread[1], spread[0])
			}
		})
	}
}
