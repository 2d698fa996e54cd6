package ridge

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/combpred/combpred/core/space"
)

// A model's max margins are the space's margins of what it decodes: of u(x) from the scores, of
// m̂(x) − p from the marginals; and each margin's sign agrees with the structure the model
// predicts from that source: not negative where the prediction has ψ_j at its largest value, not
// positive where at its smallest (directed cycles' pair coordinates can also be 0: no sign).
func TestModelMaxMarginsAgreeWithPredictions(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, sp := range everySpace(t) {
		if sp.Guarantee() != 0 {
			continue
		}
		d, w := sp.Dim(), sp.Width()
		lo, hi := space.CoordRange(sp)
		const q = 12
		U := make([]float64, q*d)
		for i := range U {
			U[i] = r.NormFloat64()
		}
		model, X := scoreModel(sp, U, q)
		for _, from := range []DecodeSource{FromScores, FromMarginals} {
			got := make([]float64, q*d)
			if err := model.MaxMargins(X, q, q, got, from, nil); err != nil {
				t.Fatalf("%s: %v", sp.Kind(), err)
			}
			V := append([]float64(nil), U...)
			ys := make([]int64, q*w)
			if from == FromMarginals {
				mm := newMarginalMap(sp, model.ref)
				mm.centreRows(V, q)
				if err := model.Marginals(X, q, q, nil, ys, EstimateLinear, ScaleNoiseFree, 1, nil); err != nil {
					t.Fatal(err)
				}
			} else if err := model.Predict(X, q, q, ys, nil); err != nil {
				t.Fatal(err)
			}
			want := make([]float64, q*d)
			if err := space.MaxMarginalMargins(sp, V, q, nil, want, nil); err != nil {
				t.Fatal(err)
			}
			psi := make([]float64, d)
			for i := 0; i < q; i++ {
				sp.Embed(ys[i*w:(i+1)*w], psi)
				for j := 0; j < d; j++ {
					g := got[i*d+j]
					if g != want[i*d+j] {
						t.Fatalf("%s %s row %d coordinate %d: margin %v, the space's %v", sp.Kind(), decodeSourceNames[from], i, j, g, want[i*d+j])
					}
					if (psi[j] == hi && g < 0) || (psi[j] == lo && g > 0) {
						t.Fatalf("%s %s row %d coordinate %d: margin %v but the prediction has ψ_j = %v", sp.Kind(), decodeSourceNames[from], i, j, g, psi[j])
					}
				}
			}
		}
	}
}

func TestParseDecodeSource(t *testing.T) {
	for code, name := range DecodeSourceNames() {
		if s, err := ParseDecodeSource(int64(code)); err != nil || decodeSourceNames[s] != name {
			t.Errorf("code %d: %v %v", code, s, err)
		}
	}
	for _, code := range []int64{-1, 2, math.MaxInt64} {
		if _, err := ParseDecodeSource(code); err == nil {
			t.Errorf("code %d accepted", code)
		}
	}
}
