//go:build !amd64

package space

// haveBatch is false where no vector kernel exists: DecodeRows then decodes row by row.
const haveBatch = false

func setHaveBatch(bool) bool { return false }

func permDP4(dp, lo, hi *float64, n, h int) {
	panic("space: permDP4 called without a vector kernel")
}

func cycleDP4(dp *float64, off *int32, wt *float64, n, s int, best *[4]float64, at *[4]int64) {
	panic("space: cycleDP4 called without a vector kernel")
}

func permDP1(dp, lo, hi *float64, n, h int) {
	panic("space: permDP1 called without a vector kernel")
}

func cycleDP1(dp *float64, off *int32, wt *float64, n, s int, best *[4]float64, at *[4]int64) {
	panic("space: cycleDP1 called without a vector kernel")
}
