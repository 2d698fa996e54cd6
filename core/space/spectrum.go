package space

// This file gives the covariance operators of the pair spaces (Permutations, DirectedCycles,
// UndirectedCycles, Cliques, Tournaments) their spectral decompositions in closed form.
//
// Their ψ has one coordinate per unordered pair of n vertices (or labels), and the uniform
// distribution is invariant under relabelling the vertices, so S commutes with the action of the
// symmetric group S_n on pairs. Its eigenspaces are therefore unions of the few irreducible
// subspaces of that action, which are spanned by incidence matrices:
//
//   - Unoriented pairs (coordinates unchanged by swapping the endpoints: UndirectedCycles, Cliques).
//     With N the n×d vertex–pair incidence matrix ((Nv)_w = Σ_{e∋w} v_e), NNᵀ = (n−2)I + 11ᵀ has the
//     eigenvalue 2(n−1) on 1 and n−2 on 1⊥, so R^d = V₀ ⊕ V₁ ⊕ V₂ with V₀ = span(1) (dimension 1),
//     V₁ = range(Nᵀ) ⊖ V₀ (n−1) and V₂ = ker N (n(n−3)/2), and
//     P₀ = 11ᵀ/d,   P₁ = (NᵀN − 2(n−1)P₀)/(n−2),   P₂ = I − P₀ − P₁.
//     Any S = c I + a NᵀN + b 11ᵀ has the eigenvalues c + 2(n−1)a + d·b, c + (n−2)a and c on them.
//   - Oriented pairs (the coordinate of the pair u<v changes sign with the orientation:
//     Permutations, DirectedCycles). With B the signed incidence matrix ((Bv)_u = Σ_{v>u} v_uv −
//     Σ_{w<u} v_wu), BBᵀ = nI − 11ᵀ (the Laplacian of the complete graph), so BᵀB has the
//     eigenvalue n on range(Bᵀ) (dimension n−1) and 0 on ker B (the cycle space, (n−1)(n−2)/2):
//     P₁ = BᵀB/n,   P₂ = I − P₁,
//     and S = c I − β BᵀB has the eigenvalues c − βn and c.
//
// Every projector costs O(d) time and O(n) memory. The tests check each decomposition against the
// dense S and its numerical eigendecomposition.

// Eigenspace is one term σ P of a spectral decomposition S = Σ_k σ_k P_k: the eigenvalue σ and the
// dimension of the eigenspace onto which P projects orthogonally.
type Eigenspace struct {
	Value float64
	Dim   int
}

// Spectral is implemented by covariance operators whose spectral decomposition S = Σ_k σ_k P_k is
// known in closed form, with a few terms and orthogonal projectors P_k (P_k P_l = 0 for k ≠ l,
// Σ_k P_k = I) that apply in O(d) time. Solvers use it to apply functions of S, such as
// (c I + S)⁻¹ = Σ_k P_k / (c + σ_k), without forming S.
type Spectral interface {
	Operator
	// Spectrum returns the terms of the decomposition: the eigenvalues σ_k, which are neither
	// sorted nor necessarily distinct, and the dimensions of their eigenspaces, which are positive
	// and sum to Dim().
	Spectrum() []Eigenspace
	// Project writes P_k v into dst, with k an index into Spectrum(); dst and v have length Dim()
	// and do not overlap.
	Project(k int, dst, v []float64)
}

// SpectralOf returns op as a Spectral operator when its decomposition is known in closed form:
// the covariances of the pair spaces, and the shape c₀I + c·11ᵀ of Multiclass, Multilabel and
// KSubsets (eigenvalues c₀ + c·d on span(1) and c₀ on its complement).
func SpectralOf(op Operator) (Spectral, bool) {
	switch o := op.(type) {
	case Spectral:
		return o, true
	case diagPlusConst:
		for _, v := range o.diag {
			if v != o.diag[0] {
				return nil, false
			}
		}
		if len(o.diag) == 0 {
			return nil, false
		}
		return constPlusRankOne{d: len(o.diag), diag: o.diag[0], c: o.c}, true
	}
	return nil, false
}

// constPlusRankOne is diag·I + c·11ᵀ, with the eigenspaces span(1) and 1⊥.
type constPlusRankOne struct {
	d       int
	diag, c float64
}

func (o constPlusRankOne) Dim() int { return o.d }

func (o constPlusRankOne) MulVec(dst, v []float64) {
	var sum float64
	for _, x := range v {
		sum += x
	}
	for i, x := range v {
		dst[i] = o.diag*x + o.c*sum
	}
}

func (o constPlusRankOne) At(i, j int) float64 {
	if i == j {
		return o.diag + o.c
	}
	return o.c
}

// Spectrum returns diag + c·d on span(1) and diag on its complement (when d > 1).
func (o constPlusRankOne) Spectrum() []Eigenspace {
	es := []Eigenspace{{Value: o.diag + o.c*float64(o.d), Dim: 1}}
	if o.d > 1 {
		es = append(es, Eigenspace{Value: o.diag, Dim: o.d - 1})
	}
	return es
}

// Project writes the mean of v on every coordinate (k = 0) or v minus its mean (k = 1).
func (o constPlusRankOne) Project(k int, dst, v []float64) {
	var sum float64
	for _, x := range v {
		sum += x
	}
	mean := sum / float64(len(v))
	for i, x := range v {
		if k == 0 {
			dst[i] = mean
		} else {
			dst[i] = x - mean
		}
	}
}

// Interface checks: the covariance operators of the pair spaces are Spectral.
var (
	_ Spectral = orientedPairCov{}
	_ Spectral = undirectedPairCov{}
	_ Spectral = cliquesCov{}
	_ Spectral = scaledIdentityOp{}
	_ Spectral = constPlusRankOne{}
)

// pairSubspace names the irreducible subspaces of R^d for pairs of n vertices (see the file
// comment).
type pairSubspace int

const (
	pairConst  pairSubspace = iota // V₀ = span(1), unoriented pairs only
	pairVertex                     // V₁: sums over vertices (unoriented) or potentials (oriented)
	pairRest                       // V₂: the rest, ker N or ker B
)

// pairSubspaceDim is the dimension of subspace s for pairs of n vertices, oriented or not.
func pairSubspaceDim(n int, oriented bool, s pairSubspace) int {
	d := n * (n - 1) / 2
	switch {
	case d == 0:
		return 0
	case oriented && s == pairConst:
		return 0
	case oriented && s == pairVertex:
		return n - 1
	case oriented:
		return d - (n - 1)
	case s == pairConst:
		return 1
	case n == 2: // d = 1 = V₀
		return 0
	case s == pairVertex:
		return n - 1
	}
	return d - n
}

// pairSpectrum lists the non-empty subspaces of pairs of n vertices with their eigenvalues
// values[s]; the returned subspaces map Spectrum indices to subspaces.
func pairSpectrum(n int, oriented bool, values [3]float64) ([]Eigenspace, []pairSubspace) {
	var es []Eigenspace
	var subs []pairSubspace
	for s := pairConst; s <= pairRest; s++ {
		if dim := pairSubspaceDim(n, oriented, s); dim > 0 {
			es = append(es, Eigenspace{Value: values[s], Dim: dim})
			subs = append(subs, s)
		}
	}
	return es, subs
}

// pairProject writes the projection of v onto subspace s of pairs of n vertices into dst.
func pairProject(n int, oriented bool, s pairSubspace, dst, v []float64) {
	d := len(v)
	if d == 0 {
		return
	}
	if s == pairConst { // unoriented only
		var sum float64
		for _, x := range v {
			sum += x
		}
		mean := sum / float64(d)
		for e := range dst {
			dst[e] = mean
		}
		return
	}
	// dst = P₁ v; the rest is the complement.
	r := make([]float64, n)
	var sum float64
	e := 0
	for a := 0; a < n; a++ {
		for b := a + 1; b < n; b++ {
			r[a] += v[e]
			if oriented {
				r[b] -= v[e]
			} else {
				r[b] += v[e]
			}
			sum += v[e]
			e++
		}
	}
	e = 0
	if oriented { // P₁ = BᵀB/n, (Bᵀr)_ab = r_a − r_b
		inv := 1 / float64(n)
		for a := 0; a < n; a++ {
			for b := a + 1; b < n; b++ {
				dst[e] = (r[a] - r[b]) * inv
				e++
			}
		}
	} else { // P₁ = (NᵀN − 2(n−1)P₀)/(n−2), (Nᵀr)_ab = r_a + r_b
		c := 2 * float64(n-1) * sum / float64(d)
		inv := 1 / float64(n-2) // n ≥ 3 here: for n = 2, V₁ is empty and never projected on
		for a := 0; a < n; a++ {
			for b := a + 1; b < n; b++ {
				dst[e] = (r[a] + r[b] - c) * inv
				e++
			}
		}
	}
	if s == pairRest {
		var mean float64
		if !oriented {
			mean = sum / float64(d)
		}
		for e := range dst {
			dst[e] = v[e] - dst[e] - mean
		}
	}
}

// Spectrum returns the eigenvalues c − βn on the potentials range(Bᵀ) (dimension n−1) and
// c = diag + 2β on the cycle space ker B ((n−1)(n−2)/2), where S = c I − β BᵀB. For permutations
// they are (n+1)/3 and 1/3; for directed cycles the first is 0 (every cycle has ψ in ker B).
func (o orientedPairCov) Spectrum() []Eigenspace {
	c := o.diag + 2*o.beta
	es, _ := pairSpectrum(o.n, true, [3]float64{0, c - o.beta*float64(o.n), c})
	return es
}

// Project writes P_k v into dst (k indexes Spectrum).
func (o orientedPairCov) Project(k int, dst, v []float64) {
	_, subs := pairSpectrum(o.n, true, [3]float64{})
	pairProject(o.n, true, subs[k], dst, v)
}

// Spectrum returns the eigenvalues of S = c I + (share − disjoint) NᵀN + disjoint·11ᵀ, with
// c = diag − 2·share + disjoint, on span(1), range(Nᵀ) ⊖ 1 and ker N: c + 2(n−1)(share −
// disjoint) + d·disjoint, c + (n−2)(share − disjoint) and c.
func (o undirectedPairCov) Spectrum() []Eigenspace {
	n := float64(o.n)
	c := o.diag - 2*o.share + o.disjoint
	a := o.share - o.disjoint
	d := n * (n - 1) / 2
	es, _ := pairSpectrum(o.n, false, [3]float64{c + 2*(n-1)*a + d*o.disjoint, c + (n-2)*a, c})
	return es
}

// Project writes P_k v into dst (k indexes Spectrum).
func (o undirectedPairCov) Project(k int, dst, v []float64) {
	_, subs := pairSpectrum(o.n, false, [3]float64{})
	pairProject(o.n, false, subs[k], dst, v)
}

// Spectrum returns the eigenvalues of S = (ρ/16)[I + NᵀN + (1−ρ)11ᵀ] on span(1), range(Nᵀ) ⊖ 1 and
// ker N: (ρ/16)(2n − 1 + (1−ρ)d), (ρ/16)(n − 1) and ρ/16.
func (o cliquesCov) Spectrum() []Eigenspace {
	n, rho := float64(o.s.n), o.s.rho
	d := float64(o.s.d)
	es, _ := pairSpectrum(o.s.n, false, [3]float64{rho / 16 * (2*n - 1 + (1-rho)*d), rho / 16 * (n - 1), rho / 16})
	return es
}

// Project writes P_k v into dst (k indexes Spectrum).
func (o cliquesCov) Project(k int, dst, v []float64) {
	_, subs := pairSpectrum(o.s.n, false, [3]float64{})
	pairProject(o.s.n, false, subs[k], dst, v)
}

// Spectrum returns the single eigenvalue c on R^d (none when d = 0).
func (o scaledIdentityOp) Spectrum() []Eigenspace {
	if o.d == 0 {
		return nil
	}
	return []Eigenspace{{Value: o.c, Dim: o.d}}
}

// Project writes v into dst: the only projector is the identity.
func (o scaledIdentityOp) Project(_ int, dst, v []float64) { copy(dst, v) }
