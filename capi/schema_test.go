package main

import (
	"bytes"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

const schemaFile = "../python/combpred/_schema.json"

// TestSchemaFile keeps the Python package's copy of the parameter tables current.
func TestSchemaFile(t *testing.T) {
	want, err := schemaJSON()
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("COMBPRED_UPDATE_SCHEMA") == "1" {
		if err := os.WriteFile(schemaFile, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is stale: run COMBPRED_UPDATE_SCHEMA=1 go test ./capi -run TestSchemaFile", schemaFile)
	}
}

// beyond returns the next value of typ past v in direction dir (±1): the next integer, or the next
// float64 (v + 1 is v itself at alpha's bound, 4.5e307).
func beyond(v float64, dir int, typ paramType) float64 {
	if typ == typeInt {
		return v + float64(dir)
	}
	return math.Nextafter(v, float64(dir)*math.Inf(1))
}

// TestSchemaRangesRefuse: for every bounded parameter, a value just outside its range is refused by
// the parser naming the key, and its default parses (the tables and the parser agree).
func TestSchemaRangesRefuse(t *testing.T) {
	check := func(name string, low, high *float64, closed string, typ paramType, parse func(string) error) {
		outside := []string{}
		if low != nil {
			v := *low
			if closed == "left" || closed == "both" {
				v = beyond(v, -1, typ)
			}
			outside = append(outside, formatParam(v, typ))
		}
		if high != nil {
			v := *high
			if closed == "right" || closed == "both" {
				v = beyond(v, 1, typ)
			}
			outside = append(outside, formatParam(v, typ))
		}
		for _, val := range outside {
			if err := parse(name + "=" + val); err == nil || !strings.Contains(err.Error(), name) {
				t.Errorf("%s=%s: got %v, want a refusal naming %s", name, val, err, name)
			}
		}
	}
	for _, p := range ridgeParams {
		if p.NoneSentinel != nil {
			continue // tol=0 means None, for solver sgd
		}
		check(p.Name, p.Low, p.High, p.Closed, p.Type, func(s string) error {
			_, err := parseFitParams("kernel=rbf;"+s, 4)
			return err
		})
	}
	for _, p := range probParams {
		if p.NoneSentinel != nil {
			continue // alpha=0 means None: scikit-learn's C = 1
		}
		check(p.Name, p.Low, p.High, p.Closed, p.Type, func(s string) error { _, err := parseProbFitParams(s); return err })
	}
	if _, err := parseFitParams("", 4); err != nil {
		t.Errorf("the ridge defaults do not parse: %v", err)
	}
	if _, err := parseProbFitParams(""); err != nil {
		t.Errorf("the prob defaults do not parse: %v", err)
	}
}

func formatParam(v float64, typ paramType) string {
	if typ == typeInt {
		return strconv.Itoa(int(v))
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
