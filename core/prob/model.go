package prob

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/check"
	"github.com/combpred/combpred/core/parallel"
	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/xmat"
	"gonum.org/v1/gonum/mat"
)

// Model is a fitted ProbabilisticStructured: p(y | x) ∝ exp(⟨u, ψ(y)⟩) with u = Wᵀx̃. Its matrix is
// its own, and a fitted Model is read-only, so its methods are safe for concurrent use. Methods
// take q inputs X (q×n, row-major) and work on the rows in parallel; randomised methods derive a
// row's seed from the seed and the row (its values for the estimates of marginals and log Z, so
// that a row's estimate does not depend on the other rows; its index for samples), so results do
// not depend on the number of threads.
type Model struct {
	Space     space.Space
	Coef      *mat.Dense // W: NFeatures (+1 intercept row) × Dim()
	Intercept bool
	NFeatures int
	// Inference is how Marginals computes E[ψ] on spaces without exact inference.
	Inference InferenceOptions
	Result    Result
	// Warnings are what the fit warns of (unboundedWarning), for its caller to pass on; a model
	// read from bytes or built from coefficients has none.
	Warnings []string
}

// ScoreWork estimates the multiply-adds of scoring one input: its product with W.
func (md *Model) ScoreWork() float64 { return float64(md.NFeatures) * float64(md.Space.Dim()) }

// Modelable returns an error when the model cannot be defined on sp: it samples and sums over the
// space, which needs its counting formulas (space.Counts).
func Modelable(sp space.Space) error {
	if err := space.Counts(sp); err != nil {
		return fmt.Errorf("prob: the model samples and sums over the space: %w", err)
	}
	return nil
}

// NewModel builds a model from its coefficients W (rows × Dim(), row-major, copied), where rows is
// nFeatures, plus one for the intercept.
func NewModel(sp space.Space, coef []float64, nFeatures int, intercept bool) (*Model, error) {
	if err := Modelable(sp); err != nil {
		return nil, err
	}
	rows := nFeatures
	if intercept {
		rows++
	}
	if nFeatures < 1 || len(coef) != rows*sp.Dim() {
		return nil, fmt.Errorf("prob: %d coefficients for %d feature(s)%s and dimension %d", len(coef), nFeatures,
			map[bool]string{true: " plus intercept", false: ""}[intercept], sp.Dim())
	}
	if err := check.Finite("coef", coef, sp.Dim()); err != nil {
		return nil, err
	}
	return &Model{Space: sp, Coef: mat.NewDense(rows, sp.Dim(), append([]float64(nil), coef...)),
		Intercept: intercept, NFeatures: nFeatures}, nil
}

// Decision writes the scores u_i = Wᵀx̃_i of q inputs into U (q × Dim()).
func (md *Model) Decision(X []float64, q, n int, U []float64) error {
	if q < 0 || len(X) != q*n {
		return fmt.Errorf("prob: buffer sizes do not match %d rows of %d features", q, n)
	}
	return md.DecisionRows(xmat.DenseRows(X, q, n), U)
}

// DecisionRows is Decision on dense or sparse rows: the same scores, up to rounding, for the same
// entries in either layout.
func (md *Model) DecisionRows(X xmat.Rows, U []float64) error {
	q, n := X.Q, X.N
	if err := md.checkFeatures(X); err != nil {
		return err
	}
	d := md.Space.Dim()
	if q < 0 || len(U) != q*d {
		return fmt.Errorf("prob: buffer sizes do not match %d rows of %d features and %d scores", q, n, d)
	}
	if q == 0 {
		return nil
	}
	if X.Sparse == nil {
		if err := check.Finite("X", X.Dense, n); err != nil {
			return err
		}
	}
	md.scoreInto(X, U)
	return check.Scores(U, d)
}

// scoreInto writes the scores of the rows X (not empty, of the model's features) into U (q × Dim()).
func (md *Model) scoreInto(X xmat.Rows, U []float64) {
	q, n, d := X.Q, X.N, md.Space.Dim()
	Um := mat.NewDense(q, d, U)
	if X.Sparse != nil {
		scoresX(Um, xmat.Matrix{Sparse: X.Sparse}, md.Coef, md.Intercept)
		return
	}
	Um.Mul(mat.NewDense(q, n, X.Dense), md.Coef.Slice(0, n, 0, d))
	if md.Intercept {
		b := md.Coef.RawRowView(n)
		for i := 0; i < q; i++ {
			row := Um.RawRowView(i)
			for a := range row {
				row[a] += b[a]
			}
		}
	}
}

// forScoredRows runs one(i, u) for the rows i of X, u the row's scores (Dim() values), scoring a
// block of rows at a time, as many as predictions score at once (space.PredictChunk): scoring all n
// rows first kept n × d scores live through the whole call, and the Go heap grows to twice its
// live size before it collects, so the peak was 3–3.5 times the budget the scores were checked
// against, and under an address-space limit the runtime aborted the process (probe EE).
// vet(U, first) refuses a block's scores (U, rows × Dim(), its first row row first of X) before
// any of its rows runs, and run runs a block's rows (forRows, or seqRows where each row is
// parallel itself). Errors name rows by their place in X.
func (md *Model) forScoredRows(X xmat.Rows, stop *cancel.Flag, vet func(U []float64, first int) error,
	run func(first, q int, stop *cancel.Flag, one func(i int) error) error, one func(i int, u []float64) error) error {
	if err := md.checkFeatures(X); err != nil { // no rows still need the model's features
		return err
	}
	if X.Sparse == nil {
		if err := check.Finite("X", X.Dense, X.N); err != nil {
			return err
		}
	}
	d := md.Space.Dim()
	block := space.PredictChunk(md.Space, X.Q)
	if err := space.CheckScores(md.Space, block); err != nil {
		return err
	}
	U := make([]float64, block*d)
	for lo := 0; lo < X.Q; lo += block {
		if err := stop.Err(); err != nil {
			return err
		}
		hi := min(lo+block, X.Q)
		Ub := U[:(hi-lo)*d]
		md.scoreInto(X.Slice(lo, hi), Ub)
		if err := check.ScoresFrom(Ub, d, lo); err != nil {
			return err
		}
		if err := vet(Ub, lo); err != nil {
			return err
		}
		if err := run(lo, hi-lo, stop, func(i int) error { return one(i, Ub[(i-lo)*d:(i-lo+1)*d]) }); err != nil {
			return err
		}
	}
	return nil
}

// inRange is forScoredRows' vet for inference that sums scores (what names it: log Z, marginals,
// samples): it refuses rows beyond the range where those sums stay finite (checkScoreRange).
func (md *Model) inRange(what string) func(U []float64, first int) error {
	return func(U []float64, first int) error { return checkScoreRange(U, md.Space.Dim(), first, what) }
}

// checkFeatures refuses rows X of other than the model's number of features.
func (md *Model) checkFeatures(X xmat.Rows) error {
	if X.N != md.NFeatures {
		return fmt.Errorf("prob: X has %d features, the model was fitted with %d", X.N, md.NFeatures)
	}
	return nil
}

// Predict writes the mode, the most probable structure of each input, argmax_y ⟨u, ψ(y)⟩ by the space's
// decoder (exact, or within its Guarantee), into ys (q × Width()); it stops with ErrCancelled
// once stop is set (nil: never).
func (md *Model) Predict(X []float64, q, n int, ys []int64, stop *cancel.Flag) error {
	if len(X) != q*n {
		return fmt.Errorf("prob: buffer sizes do not match %d rows of %d features", q, n)
	}
	return md.PredictRows(xmat.DenseRows(X, q, n), ys, stop)
}

// PredictRows is Predict on dense or sparse rows.
func (md *Model) PredictRows(X xmat.Rows, ys []int64, stop *cancel.Flag) error {
	q := X.Q
	if err := md.checkFeatures(X); err != nil { // no rows still need the model's features
		return err
	}
	if len(ys) != q*md.Space.Width() {
		return fmt.Errorf("prob: the output holds %d values, want %d×%d", len(ys), q, md.Space.Width())
	}
	if err := space.CheckDecode(md.Space, q); err != nil {
		return err
	}
	if err := space.CheckScores(md.Space, space.PredictChunk(md.Space, q)); err != nil {
		return err
	}
	scores := func(lo, hi int, U []float64) error { return md.DecisionRows(X.Slice(lo, hi), U) }
	return space.PredictRowsBy(md.Space, q, ys, scores, stop)
}

// Sample draws count structures from p(· | x_i) for each input into out
// (q × count × Width(), row-major: input i's samples first).
func (md *Model) Sample(X []float64, q, n, count int, seed uint64, opt SampleOptions, out []int64) error {
	return md.SampleRows(xmat.DenseRows(X, q, n), count, seed, opt, false, out, nil)
}

// SampleRows is Sample on dense or sparse rows. When report is not nil (q × MarginalsReportCols,
// row-major), row i receives its count of chains that cannot stand for p(· | x_i)
// (SampleStats.Unvouched) and, when check is set, the dispersed-start check's verdict on the
// samples' mean of ψ (InferenceOptions.DispersedCheck; its chain's samples are not returned): 1
// disagreed, 0 agreed, -1 did not run (exact samples, or check unset).
func (md *Model) SampleRows(X xmat.Rows, count int, seed uint64, opt SampleOptions, check bool, out []int64, report []int64) error {
	q := X.Q
	if count < 1 {
		return fmt.Errorf("prob: the number of samples must be ≥ 1, got %d", count)
	}
	w, d := md.Space.Width(), md.Space.Dim()
	if len(out) != q*count*w {
		return fmt.Errorf("prob: the output holds %d values, want %d×%d×%d", len(out), q, count, w)
	}
	if err := checkChainReport(report, q, MarginalsReportCols); err != nil {
		return err
	}
	// With the check, the samples' ψ is summed (and conditioned) per block, as marginals' is.
	var perBlock int64
	if check {
		perBlock = sampleBlockBytes(md.Space, InferenceOptions{})
	}
	if err := checkSampleMemory(count, opt, perBlock, parallel.Threads()); err != nil {
		return err
	}
	if check && opt.Sampler == SamplerChain { // "auto" is resolved per row
		if err := checkDispersed(count, opt, d, parallel.Threads()); err != nil {
			return err
		}
	}
	return md.forScoredRows(X, opt.Stop, md.inRange("sampling"), forRows, func(i int, u []float64) error {
		dst := out[i*count*w : (i+1)*count*w]
		st, verdict, err := sampleRow(md.Space, u, count, deriveSeed(seed, uint64(i)), opt, check, dst)
		if report != nil {
			report[i*MarginalsReportCols], report[i*MarginalsReportCols+1] = int64(st.Unvouched), verdict
		}
		return err
	})
}

// sampleRow draws count structures from π ∝ exp(⟨u, ψ⟩) into dst (count × Width()) and, when
// check is set and the sampler resolves to a chain, runs the dispersed-start check on their
// (conditioned) mean of ψ: the verdict is 1 when it disagreed, 0 when it agreed, -1 when it did
// not run.
func sampleRow(sp space.Space, u []float64, count int, seed uint64, opt SampleOptions, check bool, dst []int64) (SampleStats, int64, error) {
	w := sp.Width()
	keep := func(k int, y []int64) { copy(dst[k*w:(k+1)*w], y) }
	if check {
		var err error
		if opt, err = resolveSampler(sp, u, opt); err != nil {
			return SampleStats{}, -1, err
		}
		check = opt.Sampler == SamplerChain
	}
	if !check {
		st, err := visitSamples(sp, u, count, seed, opt, false, func(_, k int, y []int64, _ []float64) { keep(k, y) })
		return st, -1, err
	}
	if err := checkDispersed(count, opt, sp.Dim(), parallel.Threads()); err != nil { // rows run concurrently
		return SampleStats{}, -1, err
	}
	runs := newBatchSums(count, chainBlocks(count, opt), sp.Dim())
	st, err := visitConditioned(sp, u, count, seed, opt, false, nil, false, func(b, k int, y []int64, psi []float64) {
		keep(k, y)
		runs.add(b, k, psi)
	})
	if err != nil {
		return st, -1, err
	}
	inf := InferenceOptions{Samples: count, Sampler: opt}
	_, disagrees, err := runDispersed(sp, u, inf, seed, runs.mean(), runs.se())
	if err != nil || !disagrees {
		return st, 0, err
	}
	return st, 1, nil
}

// checkChainReport checks the optional per-row chain report of SampleRows and MarginalsRows: nil,
// or cols values per row.
func checkChainReport(report []int64, q, cols int) error {
	if report != nil && len(report) != q*cols {
		return fmt.Errorf("prob: the chain report holds %d values, want %d×%d", len(report), q, cols)
	}
	return nil
}

// Marginals writes E_{p(·|x_i)}[ψ] of each input into out (q × Dim()), by md.Inference.
func (md *Model) Marginals(X []float64, q, n int, seed uint64, out []float64) error {
	return md.MarginalsRows(xmat.DenseRows(X, q, n), seed, out, nil)
}

// MarginalsRows is Marginals on dense or sparse rows. When report is not nil (q ×
// MarginalsReportCols, row-major), row i receives its count of chains that cannot stand for
// p(· | x_i) (SampleStats.Unvouched) and the dispersed-start check's verdict
// (InferenceOptions.DispersedCheck): 1 disagreed, 0 agreed, -1 did not run.
//
// A row's samples are seeded by seed and the row's values (rowDigest): its estimate is the same
// alone, in any batch and at any place in it, and the blocks of a distributed X estimate what one
// call on all of it does.
func (md *Model) MarginalsRows(X xmat.Rows, seed uint64, out []float64, report []int64) error {
	q, d := X.Q, md.Space.Dim()
	if len(out) != q*d {
		return fmt.Errorf("prob: the output holds %d values, want %d×%d", len(out), q, d)
	}
	if err := checkChainReport(report, q, MarginalsReportCols); err != nil {
		return err
	}
	if !md.Inference.exact(md.Space) {
		if err := checkSampleMemory(md.Inference.samples(), md.Inference.Sampler, sampleBlockBytes(md.Space, md.Inference), parallel.Threads()); err != nil {
			return err
		}
		if md.Inference.DispersedCheck && md.Inference.Sampler.Sampler == SamplerChain { // "auto" is resolved per row
			if err := checkDispersed(md.Inference.samples(), md.Inference.Sampler, d, parallel.Threads()); err != nil {
				return err
			}
		}
	}
	inRange, exactScale := md.inRange("the marginals"), !md.Inference.exact(md.Space) || scaleExact(md.Space)
	vet := func(U []float64, first int) error {
		if err := inRange(U, first); err != nil || exactScale {
			return err
		}
		if err := checkScoreScale(U, d, first, fmt.Sprintf("exact inference on the %s space", md.Space.Kind())); err != nil {
			return fmt.Errorf(`%w, or estimate the marginals by sampling: predict_marginals(X, method="sampled")`, err)
		}
		return nil
	}
	if md.Inference.exact(md.Space) && bruteForced(md.Space) {
		// the space summed over once for a block of rows (bruteForceRows), not once per row
		stop := md.Inference.Sampler.Stop
		block := func(U []float64, first int) error {
			if err := vet(U, first); err != nil {
				return err
			}
			q := len(U) / d
			if k, err := checkScoreRows(md.Space, U, q); err != nil {
				return atRow(first+k, err)
			}
			if err := bruteForceRows(md.Space, U, q, out[first*d:(first+q)*d], nil, stop); err != nil {
				return err
			}
			for i := first; report != nil && i < first+q; i++ {
				report[i*MarginalsReportCols], report[i*MarginalsReportCols+1] = 0, -1 // exact: no chains, no check
			}
			return nil
		}
		return md.forScoredRows(X, stop, block, blockDone, nil)
	}
	return md.forScoredRows(X, md.Inference.Sampler.Stop, vet, forRows, func(i int, u []float64) error {
		info, err := marginals(md.Space, u, md.Inference, deriveSeed(seed, rowDigest(X, i)), out[i*d:(i+1)*d], false)
		if report != nil {
			verdict := int64(-1) // not checked: exact marginals or samples, or no check asked for
			if info.Checked {
				verdict = 0
				if info.Disagrees {
					verdict = 1
				}
			}
			report[i*MarginalsReportCols], report[i*MarginalsReportCols+1] = int64(info.Unvouched), verdict
		}
		return err
	})
}

// LogPartition computes log Z(u_i) of each input by opt (a row seeded by opt.Seed and its values)
// into out (length q) and returns the details of each estimate. A Taylor estimate outside the
// approximation's proven range (ErrTaylorRange) does not fail the call: the row keeps its
// estimate and bound, with Valid false.
func (md *Model) LogPartition(X []float64, q, n int, opt LogZOptions, out []float64) ([]LogZResult, error) {
	res := make([]LogZResult, max(q, 0))
	err := md.LogPartitionRows(xmat.DenseRows(X, q, n), opt, out, func(i int, r LogZResult) { res[i] = r })
	return res, err
}

// LogPartitionRows is LogPartition on dense or sparse rows, handing each row's details to
// keep(i, r) (nil: none wanted) instead of returning them: for many rows they outweigh the
// estimates. keep is called from several goroutines at once, for distinct rows.
func (md *Model) LogPartitionRows(X xmat.Rows, opt LogZOptions, out []float64, keep func(i int, r LogZResult)) error {
	if len(out) != X.Q {
		return fmt.Errorf("prob: the output holds %d values, want %d", len(out), X.Q)
	}
	prepare, rowLogZ := md.logZSource(X, opt)
	inRange := md.inRange("log Z")
	vet := func(U []float64, first int) error {
		if err := inRange(U, first); err != nil {
			return err
		}
		return prepare(U, first)
	}
	return md.forScoredRows(X, opt.Sampler.Stop, vet, md.logZRows(opt), func(i int, u []float64) error {
		r, err := rowLogZ(i, u)
		if err == nil {
			out[i] = r.LogZ
			if keep != nil {
				keep(i, r)
			}
		}
		return err
	})
}

// logZRows is how log Z by opt runs a block's rows: in parallel, but one at a time for the FPRAS,
// which samples in parallel itself.
func (md *Model) logZRows(opt LogZOptions) func(first, q int, stop *cancel.Flag, one func(i int) error) error {
	if opt.Method == LogZFPRAS || (opt.Method == LogZAuto && !autoExactLogZ(md.Space)) {
		return seqRows
	}
	return forRows
}

// logZSource returns how LogPartitionRows and ScoreSamplesRows obtain a row's log Z by opt: row by
// row (rowLogPartition), or, where that is exact inference summing over every structure, for a
// block of rows at once (bruteForceRows: the space enumerated once per block, not once per row),
// which prepare does with the block's scores before its rows run.
func (md *Model) logZSource(X xmat.Rows, opt LogZOptions) (prepare func(U []float64, first int) error,
	row func(i int, u []float64) (LogZResult, error)) {
	exact := opt.Method == LogZExact || (opt.Method == LogZAuto && autoExactLogZ(md.Space))
	if _, alone := space.LogZOf(md.Space); !exact || alone || !bruteForced(md.Space) {
		return func([]float64, int) error { return nil },
			func(i int, u []float64) (LogZResult, error) { return md.rowLogPartition(X, i, u, opt) }
	}
	var (
		lz    []float64 // the block's log Z, written by prepare, then read by its rows
		first int
	)
	prepare = func(U []float64, f int) error {
		q := len(U) / md.Space.Dim()
		if k, err := checkScoreRows(md.Space, U, q); err != nil {
			return atRow(f+k, err)
		}
		lz, first = slices.Grow(lz[:0], q)[:q], f
		return bruteForceRows(md.Space, U, q, nil, lz, opt.Sampler.Stop)
	}
	row = func(i int, _ []float64) (LogZResult, error) {
		return LogZResult{LogZ: lz[i-first], Method: LogZExact, Valid: true}, nil
	}
	return prepare, row
}

// rowLogPartition is log Z(u) of X's row i by opt, its estimate seeded by opt.Seed and the row's
// values (as MarginalsRows's); an estimate beyond the Taylor range is kept, with Valid false.
func (md *Model) rowLogPartition(X xmat.Rows, i int, u []float64, opt LogZOptions) (LogZResult, error) {
	opt.Seed = deriveSeed(opt.Seed, rowDigest(X, i))
	r, err := LogPartition(md.Space, u, opt)
	if err != nil && !errors.Is(err, ErrTaylorRange) {
		return r, err
	}
	return r, nil
}

// ScoreSamples writes log p(y_i | x_i) = ⟨u_i, ψ(y_i)⟩ − log Z(u_i) into out (length q), with
// log Z by opt (exact where available when opt.Method is LogZAuto), and returns for each row
// whether log Z's guarantee applies (LogZResult.Valid): a Taylor estimate beyond its range or an
// FPRAS on a chain's samples may put log p anywhere, above 0 too.
func (md *Model) ScoreSamples(X []float64, q, n int, ys []int64, opt LogZOptions, out []float64) ([]bool, error) {
	valid := make([]bool, max(q, 0))
	err := md.ScoreSamplesRows(xmat.DenseRows(X, q, n), ys, opt, out, func(i int, ok bool) { valid[i] = ok })
	return valid, err
}

// ScoreSamplesRows is ScoreSamples on dense or sparse rows, handing each row's validity to
// valid(i, ok) (called from several goroutines at once, for distinct rows).
func (md *Model) ScoreSamplesRows(X xmat.Rows, ys []int64, opt LogZOptions, out []float64, valid func(i int, ok bool)) error {
	q := X.Q
	if len(out) != q {
		return fmt.Errorf("prob: the output holds %d values, want %d", len(out), q)
	}
	// named as score_samples' argument, Y (fit's targets are y)
	if err := space.ValidateNamedRows(md.Space, ys, q, 0, "Y"); err != nil {
		return err
	}
	d, w := md.Space.Dim(), md.Space.Width()
	prepare, rowLogZ := md.logZSource(X, opt)
	vet := func(U []float64, first int) error {
		if err := checkScoreScale(U, d, first, "log p(y | x) = ⟨u, ψ(y)⟩ − log Z(u)"); err != nil {
			return err
		}
		return prepare(U, first)
	}
	return md.forScoredRows(X, opt.Sampler.Stop, vet, md.logZRows(opt), func(i int, u []float64) error {
		r, err := rowLogZ(i, u)
		if err != nil {
			return err
		}
		psi := make([]float64, d)
		md.Space.Embed(ys[i*w:(i+1)*w], psi)
		lp := dot(u, psi) - r.LogZ
		if r.Method == LogZExact {
			// exact log Z is at least every score, but both round: a mode's log p came out
			// +1e-7 at ‖u‖₁ ≈ 1e10 (Permutations(4), probe AR)
			lp = min(lp, 0)
		}
		if math.IsNaN(lp) || math.IsInf(lp, 0) {
			// Scores near the float64 limit: ⟨u, ψ⟩ or log Z overflowed, and log p(y | x) is lost.
			return rowlessError{fmt.Errorf("prob: X row %d gives scores too large for float64 (log p(y | x) overflows); rescale X", i)}
		}
		out[i] = lp
		valid(i, r.Valid)
		return nil
	})
}

// forRows runs one(i) for the rows i in [first, first+q) in parallel; after a failure, or once
// stop is set, the remaining rows are skipped, and the error of the lowest failing row (or
// ErrCancelled) is returned, prefixed with its row.
func forRows(first, q int, stop *cancel.Flag, one func(i int) error) error {
	var f firstFailure
	parallel.For(q, 1, func(lo, hi int) {
		for i := first + lo; i < first+hi && !f.failed.Load() && !stop.Stopped(); i++ {
			if err := one(i); err != nil {
				f.record(i, err)
			}
		}
	})
	if f.err != nil {
		return atRow(f.row, f.err)
	}
	return stop.Err()
}

// blockDone is forScoredRows' run for a block computed whole by its vet (MarginalsRows on a space
// summed by brute force): no row is left to run.
func blockDone(int, int, *cancel.Flag, func(int) error) error { return nil }

// seqRows is forRows one row after another, for rows whose computation is parallel itself.
func seqRows(first, q int, stop *cancel.Flag, one func(i int) error) error {
	for i := first; i < first+q; i++ {
		if err := stop.Err(); err != nil {
			return err
		}
		if err := one(i); err != nil {
			return atRow(i, err)
		}
	}
	return nil
}

// atRow is the error err of row i, prefixed with the row unless it is a rowlessError.
func atRow(i int, err error) error {
	var re rowlessError
	if errors.As(err, &re) {
		return err // the same for every row: which row met it first is the threads' timing
	}
	return fmt.Errorf("row %d: %w", i, err)
}

// rowlessError is an error that a row's computation meets only because of the call's parameters,
// as every other row would, or that names its row itself: forRows reports it without prefixing
// the row.
type rowlessError struct{ error }

func (e rowlessError) Unwrap() error { return e.error }

// Output is the space of the structures the model predicts (model.Model).
func (md *Model) Output() space.Space { return md.Space }
