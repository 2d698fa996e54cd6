package ridge

// averager keeps the running mean of the iterates in cur: avg += (cur − avg)/count.
type averager struct {
	avg   []float64 // nil until average() is called
	count float64
}

func (a *averager) start(cur []float64) {
	a.avg = append(make([]float64, 0, cap(cur)), cur...)
	a.count = 1
}

// update folds the current iterate (the first len(cur) values; the rest were added since and
// their history is zero) into the mean.
func (a *averager) update(cur []float64) {
	if a.avg == nil {
		return
	}
	a.count++
	if len(a.avg) < len(cur) {
		a.avg = append(a.avg, make([]float64, len(cur)-len(a.avg))...)
	}
	f := 1 / a.count
	for i, v := range cur {
		a.avg[i] += f * (v - a.avg[i])
	}
}
