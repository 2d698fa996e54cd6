package budget

import "runtime/metrics"

// idleMetrics are the Go heap's mapped spans that hold no objects: free (resident) and released
// (returned to the system, still mapped). The heap reuses them before it maps more.
var idleMetrics = []string{"/memory/classes/heap/free:bytes", "/memory/classes/heap/released:bytes"}

// idleHeapBytes is the address space the Go heap has mapped and can reuse without a new mapping.
func idleHeapBytes() int64 {
	samples := make([]metrics.Sample, len(idleMetrics))
	for i, name := range idleMetrics {
		samples[i].Name = name
	}
	metrics.Read(samples)
	var idle int64
	for _, s := range samples {
		if s.Value.Kind() == metrics.KindUint64 {
			idle += int64(min(s.Value.Uint64(), 1<<62))
		}
	}
	return idle
}
