// Package prob is ProbabilisticStructured: the exponential family
//
//	p(y | x, W) = exp(⟨u, ψ(y)⟩ − log Z(u)),   u = Wᵀx,   Z(u) = Σ_{y∈Y} exp(⟨u, ψ(y)⟩),
//
// over any output space of package space (thesis chapter 6), with MAP training
//
//	J(W) = λ‖W‖² + (1/m) Σ_i [log Z(u_i) − ⟨u_i, ψ(y_i)⟩],
//	∇J   = 2λW + (1/m) Σ_i x_i (E_{p(·|x_i)}[ψ] − ψ(y_i))ᵀ.
//
// Everything below works on one score vector u (length d = Dim()) at a time; Model and Fit map
// inputs to scores.
//
// Files, one concept each:
//
//	rng.go            randomness: the source interface chains draw from, seed derivation
//	score.go          ⟨u, ψ(y)⟩, pair-weight matrices, log-sum-exp helpers
//	bounds.go         bounds on the score range (CFTP coalescence, Taylor validity, FPRAS schedule)
//	chain.go          the Chain interface and NewChain
//	meta.go           Metropolis "meta" chain: uniform proposals (thesis §6.6.2)
//	cube.go           MC_cube: single-bit moves on multilabel and subtrees (thesis appendix C.3)
//	transpositions.go adjacent transpositions for permutations
//	cyclemoves.go     insert/remove, vertex move and 2-opt for directed and undirected cycles
//	mixed.go          a local chain interleaved with meta proposals
//	cftp.go           exact samples by coupling from the past on the meta chain
//	sample.go         n samples from CFTP, a chain (burn-in, thinning, work bounds) or the
//	                  space's exact sampler of scores (space.ScoreSampling)
//	exact.go          exact log Z and E[ψ]: dispatch, brute force on enumerable spaces
//	closedforms.go    the closed forms per space
//	fpras.go          the FPRAS: telescoping product over a cooling schedule (thesis §6.3)
//	fpras_adaptive.go the FPRAS' default: Huber's tootsie-pop algorithm, an adaptive schedule
//	taylor.go         the second-order Taylor approximation of Z (thesis §6.4, corrected)
//	logz.go           LogPartition: one entry point for the three methods
//	marginals.go      E[ψ], exact or from samples
//	objective.go      J and ∇J over a data set (Problem)
//	lbfgs.go          a small L-BFGS for the exact objective
//	options.go        Fit options and result
//	fit.go            Fit: L-BFGS (exact inference) or Adam with iterate averaging (sampled)
//	persistent.go     sampled fits: persistent chains, the norm test's sample growth, the report
//	                  of the gradient reached with its Monte Carlo standard error
//	model.go          Model: scores, mode, samples, marginals, log Z and log p(y|x) per row
//
// Determinism: every random routine takes a seed; samples, rows and FPRAS stages derive their
// own seeds from it (deriveSeed), so results do not depend on the number of threads.
package prob
