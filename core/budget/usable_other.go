//go:build !linux

package budget

// usableMemory is unknown outside Linux: the default budget then uses fallbackMemory.
func usableMemory() int64 { return 0 }

// mappingRoom is not known outside Linux.
func mappingRoom() (int64, string, bool) { return 0, "", false }

// cgroupRoom is not known outside Linux.
func cgroupRoom() (int64, bool) { return 0, false }
