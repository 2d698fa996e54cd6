package budget

import "runtime/metrics"

// idleMetrics are the Go heap's mapped spans that hold no objects: free (resident) and released
// (returned to the system, still mapped). The heap reuses them before it maps more.
var idleMetrics = []string{"/memory/classes/heap/free:bytes", "/memory/classes/heap/released:bytes"}

// idleHeapBytes is the address space the Go heap has mapped and can reuse without a new mapping.
func idleHeapBytes() int64 { return heapBytes(idleMetrics...) }

// freeHeapBytes is the memory the Go heap holds resident in spans with no objects, which it reuses
// before it takes more from the system: room under a cgroup's memory limit, which counts it used.
func freeHeapBytes() int64 { return heapBytes(idleMetrics[0]) }

// heapBytes is the sum of the runtime's metrics of the given names.
func heapBytes(names ...string) int64 {
	samples := make([]metrics.Sample, len(names))
	for i, name := range names {
		samples[i].Name = name
	}
	metrics.Read(samples)
	var sum int64
	for _, s := range samples {
		if s.Value.Kind() == metrics.KindUint64 {
			sum += int64(min(s.Value.Uint64(), 1<<62))
		}
	}
	return sum
}
