package main

import (
	"strings"
	"testing"

	"github.com/combpred/combpred/core/kernel"
	"github.com/combpred/combpred/core/ridge"
)

func TestParseFitParams(t *testing.T) {
	opt, err := parseFitParams("alpha=0.5; kernel=rbf;gamma=0.1;degree=2;coef0=0;fit_intercept=0;solver=cg;tol=1e-6;max_iter=50", 4)
	if err != nil {
		t.Fatal(err)
	}
	if opt.Alpha != 0.5 || opt.Kernel.Kind != kernel.RBF || opt.Kernel.Gamma != 0.1 || opt.Kernel.Degree != 2 ||
		opt.Kernel.Coef0 != 0 || opt.Intercept || opt.Solver != ridge.CG || opt.Tol != 1e-6 || opt.MaxIter != 50 {
		t.Errorf("parsed %+v", opt)
	}
	opt, err = parseFitParams("kernel=rbf;solver=sgd;tau=50;eta0=0.25;n_components=30;random_state=18446744073709551615", 4)
	if err != nil {
		t.Fatal(err)
	}
	if opt.Solver != ridge.SGD || opt.Tau != 50 || opt.Eta0 != 0.25 || opt.NComponents != 30 || opt.Seed != 1<<64-1 || opt.TraceObjective {
		t.Errorf("parsed %+v", opt)
	}
	opt, err = parseFitParams("kernel=rbf;solver=sgd;tol=0;trace_objective=1", 4)
	if err != nil {
		t.Fatal(err)
	}
	if opt.Tol != 0 || !opt.TraceObjective {
		t.Errorf("parsed %+v", opt)
	}
	// gamma left out is 1/n_features; n_components is ignored by the kernels without a map, as
	// gamma and degree are (the linear kernel's n_components=5 was refused by the core and
	// dropped by Python: two rules)
	for _, c := range []struct {
		s          string
		n          int
		gamma      float64
		components int
	}{
		{"kernel=rbf", 4, 0.25, 0}, {"kernel=poly", 103, 1.0 / 103, 0}, {"kernel=rbf;gamma=3", 4, 3, 0},
		{"n_components=5", 4, 0.25, 0}, {"kernel=precomputed;n_components=5", 9, 1.0 / 9, 0},
		{"kernel=rbf;n_components=5", 4, 0.25, 5},
	} {
		opt, err := parseFitParams(c.s, c.n)
		if err != nil || opt.Kernel.Gamma != c.gamma || opt.NComponents != c.components {
			t.Errorf("parseFitParams(%q, %d) = gamma %v, n_components %d, %v; want %v, %d", c.s, c.n,
				opt.Kernel.Gamma, opt.NComponents, err, c.gamma, c.components)
		}
	}
	bad := map[string]string{
		"tau=-1":                          "tau",
		"eta0=-0.5":                       "eta0",
		"kernel=rbf;n_components=-1":      "n_components",
		"kernel=rbf;n_components=1000000": "n_components",
		"random_state=-3":                 "random_state",
		"random_state=1e3":                "random_state",
		"alpha=-1":                        "alpha",
		"alpha=nan":                       "alpha",
		"alpha":                           "key=value",
		"kernel=sigmoid":                  "kernel",
		"fit_intercept=2":                 "fit_intercept",
		"max_iter=0":                      "max_iter",
		"colour=red":                      "unknown parameter",
		"alpha=1;alpha=2":                 "twice",
		"degree=1e99":                     "degree",
		"solver=newton":                   "solver",
		"tol=1":                           "tol",
		"tol=0":                           "tol", // the tolerance stop is optional for SGD only
		"solver=sgd;tol=-1e-9":            "tol",
		"trace_objective=2":               "trace_objective",
		"kernel=rbf;gamma=0":              "gamma",
	}
	for in, want := range bad {
		if _, err := parseFitParams(in, 4); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("parseFitParams(%q) error %v, want it to mention %q", in, err, want)
		}
	}
}

// FuzzParseFitParams: the parameter string comes from Python callers; no input may panic, and any
// accepted input yields valid options.
func FuzzParseFitParams(f *testing.F) {
	f.Add("alpha=1;kernel=rbf;gamma=0.5")
	f.Add("solver=exact;fit_intercept=0;max_iter=3")
	f.Add("kernel=poly;solver=sgd;tau=10;eta0=2;random_state=7")
	f.Add("kernel=rbf;solver=sgd;tol=0;trace_objective=1")
	f.Add("kernel=rbf;n_components=100;random_state=0;solver=cg")
	f.Fuzz(func(t *testing.T, s string) {
		opt, err := parseFitParams(s, 4)
		if err == nil {
			if verr := opt.Validate(); verr != nil {
				t.Fatalf("accepted %q but options are invalid: %v", s, verr)
			}
		}
	})
}

// TestParseFloatNamesTheRange: 1e400 was "not a number", and 1e-400 read as 0, which for alpha
// means "the default" (a silent change of meaning).
func TestParseFloatNamesTheRange(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // an error's text, or "" for a value
		val  float64
	}{
		{"1e400", "out of float64's range", 0}, {"-1e400", "out of float64's range", 0},
		{"1e-400", "reads as 0", 0}, {"0x1p-1100", "reads as 0", 0}, {"2e-324", "reads as 0", 0},
		{"0", "", 0}, {"0e5", "", 0}, {"-0.000", "", 0}, {"0x0p3", "", 0}, {"5e-324", "", 5e-324}, {"1.5", "", 1.5},
		{"abc", "not a number", 0}, {"inf", "must be finite", 0},
	} {
		v, err := parseFloat(tc.in)
		switch {
		case tc.want == "" && (err != nil || v != tc.val):
			t.Errorf("%q: %v, %v; want %v", tc.in, v, err, tc.val)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%q: %v, want an error with %q", tc.in, err, tc.want)
		}
	}
}
