/* Helpers of the combpred C ABI that must be written in C: the per-thread error buffer and the
   trampoline through which Go calls a progress callback. */
#ifndef CP_HELPERS_H
#define CP_HELPERS_H
#include <stdint.h>

/* cp_progress_fn is called after each solver iteration; a nonzero return cancels the fit. */
typedef int (*cp_progress_fn)(int64_t iteration, double objective, double rel_grad, void *ctx);

void cp_set_error(const char *msg);
const char *cp_last_error(void);
const char *cp_version(void);
int cp_call_progress(cp_progress_fn fn, int64_t iteration, double objective, double rel_grad, void *ctx);
#endif
