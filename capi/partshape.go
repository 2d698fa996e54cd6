package main

/*
#include <stdint.h>
*/
import "C"

import "fmt"

// checkPartShape refuses a part's buffers of another shape than X's n features give them: the
// rows of W (k: n, plus 1 with fit_intercept) × the space's dimension d, in the part sums of both
// estimators (cp_ridge_cg_setup and its kin, cp_prob_data_sums). A Dask block wider than
// its array declared had b and g written past their ends (probe CZ: a corrupted heap).
func checkPartShape(what string, rows, dim, n C.int64_t, k, d int) error {
	if int64(rows) != int64(k) || int64(dim) != int64(d) {
		return fmt.Errorf("%s is %d×%d, but X's %d features need %d×%d (n_features, plus 1 with fit_intercept, × the space's dimension)",
			what, int64(rows), int64(dim), int64(n), k, d)
	}
	return nil
}
