#include <stdlib.h>
#include <string.h>
#include "cp_helpers.h"

/* One message per OS thread: ctypes releases the GIL, so Python threads call us concurrently and
   each must read back its own message. The thread-local slot is one pointer in the global-dynamic
   TLS model, because a library loaded by dlopen cannot claim a large static TLS block. */
#define CP_ERROR_SIZE 4096
static __thread char *cp_error_buffer __attribute__((tls_model("global-dynamic")));
static char cp_error_fallback[] = "out of memory while recording an error";

static char *error_buffer(void) {
    if (cp_error_buffer == NULL) {
        cp_error_buffer = calloc(1, CP_ERROR_SIZE);
    }
    return cp_error_buffer;
}

void cp_set_error(const char *msg) {
    char *buf = error_buffer();
    if (buf == NULL) {
        return;
    }
    strncpy(buf, msg, CP_ERROR_SIZE - 1);
    buf[CP_ERROR_SIZE - 1] = '\0';
}

__attribute__((visibility("default"))) const char *cp_last_error(void) {
    char *buf = error_buffer();
    return buf != NULL ? buf : cp_error_fallback;
}

/* Kept in step with python/combpred/_version.py: the package refuses a library of another version. */
__attribute__((visibility("default"))) const char *cp_version(void) { return "0.1.0"; }

int cp_call_progress(cp_progress_fn fn, int64_t iteration, double objective, double rel_grad, void *ctx) {
    return fn(iteration, objective, rel_grad, ctx);
}
