/* Helpers of the combpred C ABI that must be written in C: the per-thread error buffer and row origin, and the
   trampolines through which Go calls the progress, data-sums and products callbacks. */
#ifndef CP_HELPERS_H
#define CP_HELPERS_H
#include <stdint.h>

/* cp_progress_fn is called after each solver iteration; a nonzero return cancels the fit. */
typedef int (*cp_progress_fn)(int64_t iteration, double objective, double rel_grad, void *ctx);

/* cp_sums_fn computes the data sums of a distributed fit (see combpred.h). */
typedef int (*cp_sums_fn)(const double *coef, int64_t rows, int64_t d, int64_t weight_exponent, double *loss, double *weight, double *grad, void *ctx);

/* cp_products_fn computes the summed products of a distributed CG fit (see combpred.h). */
typedef int (*cp_products_fn)(const double *v, int64_t rows, int64_t d, double *out, void *ctx);

/* The bytes of the per-thread error buffer, its terminating NUL included: Go shortens longer
   messages to fit (errorText). */
#define CP_ERROR_SIZE 4096

/* CP_INTERNAL marks the helpers only the library's Go code calls: hidden from its dynamic symbol
   table, so that the exported cp_ names are exactly the ABI of combpred.h (they take no status and
   check no pointer, as the ABI's entry points do). */
#define CP_INTERNAL __attribute__((visibility("hidden")))

CP_INTERNAL void cp_set_error(const char *msg);
const char *cp_last_error(void);
CP_INTERNAL void cp_store_row_origin(int64_t first);
CP_INTERNAL int64_t cp_load_row_origin(void);
const char *cp_version(void);
CP_INTERNAL int cp_call_progress(cp_progress_fn fn, int64_t iteration, double objective, double rel_grad, void *ctx);
CP_INTERNAL int cp_call_products(cp_products_fn fn, const double *v, int64_t rows, int64_t d, double *out, void *ctx);
CP_INTERNAL int cp_call_sums(cp_sums_fn fn, const double *coef, int64_t rows, int64_t d, int64_t weight_exponent, double *loss, double *weight, double *grad, void *ctx);
#endif
