package ridge

import (
	"fmt"
	"slices"

	"github.com/combpred/combpred/core/kernel"
	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/xmat"
	"gonum.org/v1/gonum/mat"
)

// PartialFit continues prev (nil to start) with a new chunk of examples and returns the updated
// model; prev is not modified and stays valid, so concurrent predictions with it are safe. The
// space, kernel, intercept, feature count and the Nyström map's n_components must be those of prev;
// Alpha, Tol, Eta0, Tau and Seed may change between calls.
//
// Linear models, and rbf or poly models with NComponents > 0 (which are linear on their Nyström
// map, whose landmarks the first chunk provides), are continued exactly with solver auto or exact:
// the model keeps the sufficient statistics of every example seen (stats.go), O((kd)²/4) memory
// whatever their number, and the result equals Fit with solver=exact on all the chunks together.
// Result.Objective is then J over all the examples seen. With solver=sgd they, and rbf or poly
// models without a Nyström map (solver auto or sgd), make one SGD pass over the chunk (sgd.go),
// continuing the step-size schedule of prev with m in J_i the number of examples seen so far; a
// kernel expansion grows by the chunk's examples (at most Tau of them are kept with truncation).
// Result.Objective is then J over the chunk alone, and Result.RelGrad its relative change over the
// pass. Precomputed kernels are not supported: their expansion lives on the training samples.
func PartialFit(prev *Model, sp space.Space, X []float64, m, n int, ys []int64, weights []float64, opt Options) (*Model, error) {
	if err := CheckPartialFit(opt); err != nil {
		return nil, err
	}
	if prev != nil {
		if err := prev.continuable(sp, n, &opt); err != nil {
			return nil, err
		}
	}
	in, err := denseInput(X, m, n)
	if err != nil {
		return nil, err
	}
	return partialFit(prev, sp, in, ys, weights, opt)
}

// PartialFitCSR is PartialFit on a sparse X (m×n CSR, viewed and not retained): linear models
// and Nyström models continue exactly as on dense X; kernel expansions without a Nyström map, which
// PartialFit continues by SGD over dense support inputs, are refused.
func PartialFitCSR(prev *Model, sp space.Space, X *xmat.CSR, ys []int64, weights []float64, opt Options) (*Model, error) {
	if err := CheckPartialFit(opt); err != nil {
		return nil, err
	}
	in, err := sparseInput(X)
	if err != nil {
		return nil, err
	}
	_, n := in.Dims()
	if prev != nil {
		if err := prev.continuable(sp, n, &opt); err != nil {
			return nil, err
		}
	}
	return partialFit(prev, sp, in, ys, weights, opt)
}

// CheckPartialFit refuses the options no partial_fit runs with, from the options alone (the C ABI
// asks before a chunk is read, so that partial_fit is not offered for them): precomputed kernels,
// whose expansion lives on the training samples; solvers other than auto, exact and sgd; solver
// exact for a kernel expansion without a Nyström map, which keeps no sufficient statistics; and
// the empirical reference measure on SGD.
func CheckPartialFit(opt Options) error {
	expansion := opt.Kernel.Kind != kernel.Linear && opt.NComponents == 0
	switch {
	case opt.Kernel.Kind == kernel.Precomputed:
		return fmt.Errorf("partial_fit does not support precomputed kernels; use fit")
	case expansion && opt.Solver != Auto && opt.Solver != SGD:
		return fmt.Errorf("partial_fit of a %v kernel model without n_components uses solver=\"sgd\" (or auto), not %v",
			opt.Kernel.Kind, opt.Solver)
	case opt.Solver != Auto && opt.Solver != Exact && opt.Solver != SGD:
		return fmt.Errorf("partial_fit solves exactly (solver auto or exact) or by SGD (solver=\"sgd\"), not by %v", opt.Solver)
	case (opt.Solver == SGD || expansion) && opt.EmpiricalWeight > 0:
		return fmt.Errorf("partial_fit with empirical_weight > 0 needs the exact solver's statistics (a linear or Nyström " +
			"model, solver auto or exact): the empirical measure changes as data arrive, and only those statistics keep it exact")
	}
	return nil
}

func partialFit(prev *Model, sp space.Space, Xin xmat.Matrix, ys []int64, weights []float64, opt Options) (*Model, error) {
	m, n := Xin.Dims()
	if Xin.Sparse != nil && opt.Kernel.Kind != kernel.Linear && opt.NComponents == 0 {
		return nil, fmt.Errorf("partial_fit of a %v kernel model without n_components runs SGD over dense support inputs: "+
			"on sparse X use n_components (a Nyström map) or the linear kernel", opt.Kernel.Kind)
	}
	// A chunk solved exactly from the accumulated statistics is a part of the data: its weights may
	// all be subnormal beside the other chunks' normal ones, as a part of fit's may be, and the
	// total is what addAndSolve checks. SGD keeps no total, so its chunks are checked alone (an
	// all-subnormal chunk fitted an all-zero model, probe BK).
	var flags problemFlags
	if exactChunk := (opt.Kernel.Kind == kernel.Linear || opt.NComponents > 0) && (opt.Solver == Auto || opt.Solver == Exact); exactChunk {
		flags = partOfData
	}
	p, err := prepareProblem(sp, Xin, ys, weights, &opt, flags)
	if err != nil {
		return nil, err
	}
	Xm := Xin.Dense
	md := &Model{Space: sp, Kernel: opt.Kernel, Intercept: opt.Intercept, NFeatures: n, Seen: int64(m)}
	md.warnPrecision(Xin)
	var prevSteps int64
	if prev != nil {
		md.Seen += prev.Seen
		prevSteps = prev.Steps
		md.ny, md.components = prev.ny, prev.components
	}
	if opt.Kernel.Kind != kernel.Linear && opt.NComponents == 0 {
		var old, oldDual *mat.Dense
		if prev != nil {
			old, oldDual = prev.Support, prev.Dual
		}
		ks := newKernelSGD(p, opt.Kernel, opt.Intercept, Xm, old, oldDual, prevSteps, opt.Tau)
		ks.stop = opt.Stop
		md.Solver = SGD
		run := newSGDRun(p, ks, float64(md.Seen), prevSteps, &opt)
		if md.Result, err = run.pass(ks, &opt); err != nil {
			return nil, md.withWarnings(err)
		}
		md.Steps = run.steps
		support, dual := ks.expansion(true)
		md.Dual = dual
		md.setSupport(xmat.Matrix{Dense: support})
		if err := md.checkFinite(); err != nil {
			return nil, md.withWarnings(err)
		}
		md.warnWeightSpread(p.Weight, p.Alpha, opt.Tol)
		return md, nil
	}
	des := design{X: Xm, sp: Xin.Sparse, intercept: opt.Intercept}
	if opt.NComponents > 0 {
		if md.ny == nil {
			if md.ny, err = buildNystrom(opt.Kernel, opt.Intercept, Xin, opt.NComponents, opt.Seed, nil, opt.Stop); err != nil {
				return nil, err
			}
			md.components = opt.NComponents
		}
		Phi, err := md.ny.apply(Xin, opt.Stop)
		if err != nil {
			return nil, err
		}
		des = design{X: Phi}
	}
	_, d := p.dims()
	k := des.cols()
	switch opt.Solver {
	case Auto, Exact:
		if k*d > MaxExactUnknowns {
			return nil, fmt.Errorf("partial_fit solves exactly from statistics of (%d·%d)² values (%s > %d); use solver=\"sgd\"",
				k, d, unknownsOf(des.intercept), MaxExactUnknowns)
		}
		nf := des.features()
		switch {
		case prev == nil:
			md.stats = newLinearStats(nf, d)
			md.stats.shift = des.statsShift(p.Weight)
		case prev.stats != nil:
			md.stats = prev.stats.clone()
			md.stats.recentre(des, p.Weight)
		default:
			return nil, noStatisticsError(prev.Solver)
		}
		md.Solver = Exact
		if prev != nil {
			md.ref = prev.ref // the structures of the chunks before, which addAndSolve joins to this one's
		}
		err = md.addAndSolve(p, des, &opt)
	case SGD:
		md.Solver = SGD
		W := mat.NewDense(k, d, nil)
		if prev != nil && prev.Coef != nil {
			W.Copy(prev.Coef)
		}
		ln := newLinearSGD(p, des, W)
		run := newSGDRun(p, ln, float64(md.Seen), prevSteps, &opt)
		md.Result, err = run.pass(ln, &opt)
		md.Coef, md.Steps = ln.result(), run.steps
	default:
		return nil, fmt.Errorf("partial_fit has no solver %v", opt.Solver) // CheckPartialFit refused it
	}
	if err == nil {
		err = md.checkFinite()
	}
	if err != nil {
		return nil, md.withWarnings(err)
	}
	md.warnWeightSpread(p.Weight, p.Alpha, opt.Tol)
	return md, nil
}

// continuable reports why a chunk with these options cannot continue md.
func (md *Model) continuable(sp space.Space, n int, opt *Options) error {
	if sp.Kind() != md.Space.Kind() || !slices.Equal(sp.Params(), md.Space.Params()) {
		return fmt.Errorf("partial_fit: the space %s%v differs from the model's %s%v", sp.Kind(), sp.Params(), md.Space.Kind(), md.Space.Params())
	}
	if n != md.NFeatures {
		return fmt.Errorf("partial_fit: X has %d features, the model was fitted with %d", n, md.NFeatures)
	}
	if !opt.Kernel.Same(md.Kernel) || opt.Intercept != md.Intercept || (opt.NComponents > 0) != (md.ny != nil) {
		return fmt.Errorf("partial_fit: kernel, its parameters, fit_intercept and n_components must stay those of the model "+
			"(kernel=%v, fit_intercept=%v, n_components=%d)", md.Kernel.Kind, md.Intercept, md.requestedComponents())
	}
	opt.Kernel = md.Kernel // a parameter the kernel ignores (degree of an rbf kernel) may have changed
	if md.ny != nil && md.components != 0 && opt.NComponents != md.components {
		// the map stays the first chunk's: a new n_components would be silently ignored
		return fmt.Errorf("partial_fit: n_components must stay that of the model (%d), got %d; fit anew to change it",
			md.components, opt.NComponents)
	}
	if md.Kernel.Kind == kernel.Linear || md.ny != nil {
		if md.Coef == nil {
			return fmt.Errorf("partial_fit: the model has no coefficients to continue")
		}
	} else if md.supportCSR != nil {
		return fmt.Errorf("partial_fit: the model was fitted on sparse X, and its %v kernel expansion cannot be continued by SGD; refit it", md.Kernel.Kind)
	} else if md.Support == nil {
		return fmt.Errorf("partial_fit: the model has no support inputs to continue")
	}
	return nil
}

// noStatisticsError explains why partial_fit with solver auto or exact cannot continue a model
// without sufficient statistics, fitted by solver ran (Auto when unknown).
func noStatisticsError(ran Solver) error {
	var how string
	switch ran {
	case CG:
		how = "its fit ran CG, which solver auto chooses where it costs less than the exact solve or where the exact " +
			"solve's normal equations cannot be solved in double precision (then so would partial_fit's)"
	case SGD:
		how = "it was fitted by SGD"
	default:
		how = "its fit did not solve exactly"
	}
	return fmt.Errorf("partial_fit (solver auto or exact) continues a model whose fit solved exactly and kept its "+
		"statistics; this model kept none (%s): fit it with solver=\"exact\" or by partial_fit, or use solver=\"sgd\"", how)
}
