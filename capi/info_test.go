package main

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func TestJSONFloat(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{
		{0.1, "0.1"}, {-2.5e-300, "-2.5e-300"}, {math.MaxFloat64, "1.7976931348623157e+308"},
		{math.NaN(), `"NaN"`}, {math.Inf(1), `"Infinity"`}, {math.Inf(-1), `"-Infinity"`},
	} {
		b, err := json.Marshal(struct {
			X jsonFloat `json:"x"`
		}{jsonFloat(tc.v)})
		if err != nil {
			t.Fatal(err)
		}
		if got := string(b); got != `{"x":`+tc.want+`}` {
			t.Errorf("%v: got %s, want %s", tc.v, got, tc.want)
		}
	}
}

// The info objects flatten the fields common to both model kinds and name every field.
func TestInfoFieldNames(t *testing.T) {
	b, err := json.Marshal(ridgeInfo{fitInfo: fitInfo{Version: infoVersion, Objective: jsonFloat(math.NaN())}})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{`"version":1`, `"n_features"`, `"objective":"NaN"`, `"relative_gradient"`, `"kernel"`, `"n_seen"`, `"streaming"`, `"warnings"`} {
		if !strings.Contains(string(b), name) {
			t.Errorf("ridge info %s lacks %s", b, name)
		}
	}
	b, err = json.Marshal(probInfo{Solver: "lbfgs"})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{`"n_iter"`, `"intercept"`, `"exact"`, `"solver":"lbfgs"`, `"warnings"`} {
		if !strings.Contains(string(b), name) {
			t.Errorf("prob info %s lacks %s", b, name)
		}
	}
}
