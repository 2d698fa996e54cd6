//go:build !linux

package budget

// usableMemory is unknown outside Linux: the default budget then uses fallbackMemory.
func usableMemory() int64 { return 0 }
