#include <string.h>
#include "cp_helpers.h"

/* One buffer per OS thread: ctypes releases the GIL, so Python threads call us concurrently and each
   must read back its own message. */
static __thread char cp_error_buffer[4096];

void cp_set_error(const char *msg) {
    strncpy(cp_error_buffer, msg, sizeof cp_error_buffer - 1);
    cp_error_buffer[sizeof cp_error_buffer - 1] = '\0';
}

__attribute__((visibility("default"))) const char *cp_last_error(void) { return cp_error_buffer; }

/* Kept in step with python/combpred/_version.py: the package refuses a library of another version. */
__attribute__((visibility("default"))) const char *cp_version(void) { return "0.1.0"; }

int cp_call_progress(cp_progress_fn fn, int64_t iteration, double objective, double rel_grad, void *ctx) {
    return fn(iteration, objective, rel_grad, ctx);
}
