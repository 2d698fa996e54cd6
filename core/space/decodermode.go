package space

import (
	"fmt"

	"slices"
)

// DecoderMode selects how a space whose decoding is NP-hard (permutations, cycles, cliques)
// decodes. It is the optional second parameter of those spaces, so it travels with saved models.
type DecoderMode int64

const (
	// DecoderAuto decodes exactly up to the space's exact limit and approximately beyond.
	DecoderAuto DecoderMode = iota
	// DecoderExact demands exact decoding, beyond the auto limit up to a hard limit where the exact
	// algorithm's time and memory per row are still bearable; larger sizes are refused.
	DecoderExact
	// DecoderApprox always uses the approximate decoder (local search), even where exact decoding
	// is affordable, so that its realised z-factor can be measured against enumeration.
	DecoderApprox
)

var decoderModeNames = [...]string{"auto", "exact", "approximate"}

func (m DecoderMode) String() string {
	if m >= 0 && int(m) < len(decoderModeNames) {
		return decoderModeNames[m]
	}
	return fmt.Sprintf("DecoderMode(%d)", int64(m))
}

// exact reports whether a space of size n decodes exactly in this mode, given the largest size
// autoMax that auto decodes exactly.
func (m DecoderMode) exact(n, autoMax int) bool {
	return m == DecoderExact || (m == DecoderAuto && n <= autoMax)
}

// sizeAndMode reads the parameters [n] or [n, mode] of a space with a decoder mode and checks that
// an exact decoder is not demanded beyond hardMax; sizeName is the user's name for n (n_labels,
// n_vertices), which the refusal names.
func sizeAndMode(kind, sizeName string, p []int64, hardMax int) (int, DecoderMode, error) {
	if len(p) != 1 && len(p) != 2 {
		return 0, 0, fmt.Errorf("space: %s takes 1 or 2 parameters (size, decoder mode), got %d", kind, len(p))
	}
	mode := DecoderAuto
	if len(p) == 2 {
		mode = DecoderMode(p[1])
		if mode < DecoderAuto || mode > DecoderApprox {
			return 0, 0, fmt.Errorf("space: %s decoder mode %d is not 0 (auto), 1 (exact) or 2 (approximate)", kind, p[1])
		}
	}
	n := int(p[0])
	if mode == DecoderExact && n > hardMax {
		return 0, 0, fmt.Errorf("space: exact decoding of %s is limited to %s ≤ %d (got %s = %d): use decoder=\"auto\" for the approximate decoder", kind, sizeName, hardMax, sizeName, n)
	}
	return n, mode, nil
}

// modeParams is the Params of a space with a decoder mode: [n], or [n, mode] unless auto, so that
// models saved before modes existed read back unchanged.
func modeParams(n int, mode DecoderMode) []int64 {
	if mode == DecoderAuto {
		return []int64{int64(n)}
	}
	return []int64{int64(n), int64(mode)}
}

// newWithMode adapts a constructor taking a size to a Constructor accepting an optional mode.
func newWithMode[S interface {
	Space
	setMode(DecoderMode)
}](kind, sizeName string, p []int64, hardMax int, ctor func(int) (S, error)) (Space, error) {
	n, mode, err := sizeAndMode(kind, sizeName, p, hardMax)
	if err != nil {
		return nil, err
	}
	s, err := ctor(n)
	if err != nil {
		return nil, err
	}
	s.setMode(mode)
	return s, nil
}

// DecoderModeNames returns the names of the decoder modes, in the order of their values.
func DecoderModeNames() []string { return slices.Clone(decoderModeNames[:]) }

// DecoderLimits returns, for each kind of space with a decoder mode, the largest size that
// DecoderAuto decodes exactly and the largest that DecoderExact accepts: the figures the Python
// spaces' docstrings state (a test checks them against this).
func DecoderLimits() map[string][2]int {
	return map[string][2]int{
		"permutations": {permExactMax, permExactHardMax},
		"dicycles":     {cycleExactMax, cycleExactHardMax},
		"ucycles":      {cycleExactMax, cycleExactHardMax},
		"cliques":      {CliquesExactMax, CliquesExactMax},
	}
}

// PartitionLimits returns, per space kind whose log-partition function is a dynamic programme
// limited in size, the largest size (labels or vertices) for which it is computed exactly.
func PartitionLimits() map[string]int {
	return map[string]int{"permutations": permPartitionMax, "dicycles": cyclePartitionMax, "ucycles": cyclePartitionMax}
}

// LogZLimits returns, per space kind that computes log Z alone beyond its PartitionLimits size
// (LogZ), the largest size for which it does.
func LogZLimits() map[string]int {
	return map[string]int{"permutations": permLogZMax, "dicycles": cycleLogZMax, "ucycles": cycleLogZMax}
}
