package main

/*
#include <stdint.h>
*/
import "C"

import "slices"

// The calls through which a pickled estimator checks that the space it was pickled with is the
// space of its model bytes: the model's bytes are the one source of truth.

// cp_prob_space writes a new handle of the ProbabilisticStructured model's own space into out.
//
//export cp_prob_space
func cp_prob_space(h C.int64_t, out *C.int64_t) (rc C.int) {
	defer guard(&rc)
	md, err := probModelOf(int64(h))
	if err == nil {
		err = outPtr("space handle", out)
	}
	if err != nil {
		return status(err)
	}
	*out = C.int64_t(newHandle(md.Space))
	return cpOK
}

// cp_space_same sets *same to 1 when the two space handles stand for the same space (same kind
// and parameters), else to 0.
//
//export cp_space_same
func cp_space_same(a, b C.int64_t, same *C.int64_t) (rc C.int) {
	defer guard(&rc)
	sa, err := spaceOf(int64(a))
	if err != nil {
		return status(err)
	}
	sb, err := spaceOf(int64(b))
	if err == nil {
		err = outPtr("same", same)
	}
	if err != nil {
		return status(err)
	}
	*same = 0
	if sa.Kind() == sb.Kind() && slices.Equal(sa.Params(), sb.Params()) {
		*same = 1
	}
	return cpOK
}
