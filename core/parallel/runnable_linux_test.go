package parallel

import "testing"

func TestParseLoadavg(t *testing.T) {
	for _, tc := range []struct {
		line string
		want int
	}{
		{"0.31 1.25 2.09 1/345 12345\n", 1},
		{"3.00 2.00 1.00 17/2048 99", 17},
		{"0.31 1.25 2.09 x/345 12345", -1},
		{"0.31 1.25 2.09 -4/345 12345", -1},
		{"0.31 1.25 2.09 345 12345", -1},
		{"0.31 1.25", -1},
		{"", -1},
	} {
		if got := parseLoadavg([]byte(tc.line)); got != tc.want {
			t.Errorf("parseLoadavg(%q) = %d, want %d", tc.line, got, tc.want)
		}
	}
}

// TestRunnableCountsTheCaller: the thread asking is running, so at least one is.
func TestRunnableCountsTheCaller(t *testing.T) {
	if n := runnable(); n < 1 {
		t.Fatalf("runnable() = %d", n)
	}
}
