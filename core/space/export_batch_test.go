package space

// SetHaveBatch switches the vector kernels of the exact decoders off (false) or back on where the
// machine has them, so that the external tests also check the portable decoders; it returns the
// previous setting.
func SetHaveBatch(v bool) bool { return setHaveBatch(v) }
