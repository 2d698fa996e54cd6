package prob

import (
	"errors"
	"fmt"

	"github.com/combpred/combpred/core/space"
	"slices"
)

// LogZMethod chooses how log Z is computed.
type LogZMethod int

// The methods.
const (
	// LogZAuto is LogZExact when the space has a closed form, computes log Z alone (space.LogZ)
	// or has at most BruteForceMax structures, LogZFPRAS otherwise.
	LogZAuto LogZMethod = iota
	// LogZExact uses closed forms, log Z alone, or enumeration (ExactLogPartition).
	LogZExact
	// LogZFPRAS is the randomised approximation scheme of thesis §6.3 (FPRAS).
	LogZFPRAS
	// LogZTaylor is the second-order approximation of thesis §6.4 (Taylor).
	LogZTaylor
)

var logZNames = [...]string{"auto", "exact", "fpras", "taylor"}

// String returns the name of the method.
func (m LogZMethod) String() string {
	if m >= 0 && int(m) < len(logZNames) {
		return logZNames[m]
	}
	return fmt.Sprintf("LogZMethod(%d)", int(m))
}

// ParseLogZMethod maps a name (auto, exact, fpras, taylor) to its LogZMethod.
func ParseLogZMethod(name string) (LogZMethod, error) {
	for i, n := range logZNames {
		if n == name {
			return LogZMethod(i), nil
		}
	}
	return 0, fmt.Errorf("prob: unknown log-partition method %q (want auto, exact, fpras or taylor)", name)
}

// FPRASSchedule chooses how the FPRAS moves from β = 0 to β = 1.
type FPRASSchedule int

// The schedules.
const (
	// ScheduleAuto is ScheduleThesis when a thesis-only option (Samples or P) is set, and
	// ScheduleAdaptive otherwise.
	ScheduleAuto FPRASSchedule = iota
	// ScheduleAdaptive is the tootsie-pop algorithm (FPRASAdaptive): a random schedule that
	// adapts to the scores, with the (ε, δ) guarantee for any δ.
	ScheduleAdaptive
	// ScheduleThesis is the thesis' fixed cooling schedule with its printed sample size
	// (FPRASThesis).
	ScheduleThesis
)

var scheduleNames = [...]string{"auto", "adaptive", "thesis"}

// String returns the name of the schedule.
func (s FPRASSchedule) String() string {
	if s >= 0 && int(s) < len(scheduleNames) {
		return scheduleNames[s]
	}
	return fmt.Sprintf("FPRASSchedule(%d)", int(s))
}

// ParseFPRASSchedule maps a name (auto, adaptive, thesis) to its FPRASSchedule.
func ParseFPRASSchedule(name string) (FPRASSchedule, error) {
	for i, n := range scheduleNames {
		if n == name {
			return FPRASSchedule(i), nil
		}
	}
	return 0, fmt.Errorf("prob: unknown FPRAS schedule %q (want auto, adaptive or thesis)", name)
}

// FPRASScheduleNames returns the names of the schedules, in the order of their values.
func FPRASScheduleNames() []string { return slices.Clone(scheduleNames[:]) }

// LogZOptions configure LogPartition. Eps, Delta, Schedule, P, Samples, MaxSamples and Sampler
// concern the FPRAS only (see FPRAS).
type LogZOptions struct {
	Method LogZMethod
	// Eps is the relative error ε ∈ (0, 1) of the FPRAS: Z within (1 ± ε) with probability ≥ 1 − δ.
	Eps float64
	// Delta is the failure probability δ ∈ (0, 1). The adaptive schedule meets any δ directly. The
	// thesis schedule runs once for δ ≥ ¼ (success probability ¾); smaller δ takes the median of
	// ⌈8 ln(1/δ)⌉ (odd) independent runs.
	Delta float64
	// Schedule is the FPRAS' schedule (ScheduleAuto: adaptive unless Samples or P is set).
	Schedule FPRASSchedule
	// P is the thesis' cooling-schedule constant p ≥ 3 (0 means 3).
	P int
	// Samples overrides the thesis' sample size per stage S = ⌈65 ε⁻² l e^{2/p}⌉ when > 0.
	Samples int
	// MaxSamples bounds the work; 0 means DefaultMaxSamples. Exceeding it is an error: the thesis
	// schedule bounds its samples and reports it before any work (runs × stages × S); the adaptive
	// one bounds the structures it draws (every CFTP proposal and chain step), checks each phase's
	// plan before the phase and stops when the count drawn exceeds it.
	MaxSamples int64
	// Sampler is how each stage samples π_β (default: exact samples by CFTP, as the thesis'
	// theorem assumes).
	Sampler SampleOptions
	// Seed makes the FPRAS reproducible.
	Seed uint64
}

// LogZResult is an estimate of log Z with what it rests on.
type LogZResult struct {
	LogZ   float64
	Method LogZMethod // the method used (never LogZAuto)
	// FPRAS: the schedule used, the ε and δ of the guarantee, the schedule length l and samples
	// per stage S (thesis schedule; 0 for the adaptive one), the number of runs (thesis: runs of
	// the median; adaptive: TPA runs of both phases), total samples and total Markov steps.
	Schedule   FPRASSchedule
	Eps, Delta float64
	Stages     int
	PerStage   int
	Runs       int
	Samples    int64
	Steps      int64
	// Taylor: Bound ≥ |log Z − LogZ| (proven, see Taylor).
	Bound float64
	// Valid says whether the method's guarantee applies: always for exact values; for the FPRAS
	// (whose guarantee is probabilistic, see Eps and Delta), when every sample was exact (CFTP)
	// and every stage drew the samples the guarantee asks for: chain samples, and a sample size
	// overridden below the thesis' S, void it, and were reported valid; for Taylor, whether the thesis' condition
	// max|⟨u, ψ⟩| ≤ 1 holds.
	Valid bool
}

// LogPartition computes or estimates log Z(u) on sp by the method of opt.
func LogPartition(sp space.Space, u []float64, opt LogZOptions) (LogZResult, error) {
	switch opt.Method {
	case LogZAuto:
		if autoExactLogZ(sp) {
			opt.Method = LogZExact
			return LogPartition(sp, u, opt)
		}
		opt.Method = LogZFPRAS
		res, err := LogPartition(sp, u, opt)
		if errors.Is(err, ErrWorkBound) {
			// the exact programme would have answered but for the memory budget: say so, or the
			// user sees only the sampler's bound
			if _, ok := space.LogZOf(sp); ok {
				if merr := checkClosedFormMemory(sp); merr != nil {
					err = fmt.Errorf("%w; method=\"auto\" took the FPRAS because exact inference does not fit the memory budget (%v)", err, merr)
				}
			}
		}
		return res, err
	case LogZExact:
		lz, err := exactLogPartition(sp, u, opt.Sampler.Stop)
		if err != nil {
			return LogZResult{}, err
		}
		return LogZResult{LogZ: lz, Method: LogZExact, Valid: true}, nil
	case LogZFPRAS:
		return FPRAS(sp, u, opt)
	case LogZTaylor:
		return taylor(sp, u, opt.Sampler.Stop)
	}
	return LogZResult{}, fmt.Errorf("prob: unknown log-partition method %d", int(opt.Method))
}

// LogZMethodNames returns the names of the log Z methods, in the order of their values.
func LogZMethodNames() []string { return slices.Clone(logZNames[:]) }

// The (ε, δ) of the FPRAS when a caller gives none: Z within a factor 1 ± 0.1 with probability 0.75
// (the thesis' single run).
const (
	DefaultEpsilon = 0.1
	DefaultDelta   = 0.25
)
