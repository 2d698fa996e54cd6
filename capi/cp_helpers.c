#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "cp_helpers.h"

/* One message per OS thread: ctypes releases the GIL, so Python threads call us concurrently and
   each must read back its own message. The thread-local slot is one pointer in the global-dynamic
   TLS model, because a library loaded by dlopen cannot claim a large static TLS block. */
static __thread char *cp_error_buffer __attribute__((tls_model("global-dynamic")));
static char cp_error_fallback[] = "out of memory while recording an error";

/* The key's destructor frees a thread's buffer when the thread exits: without it every OS thread
   that ever saw an error would leak its buffer. */
static pthread_key_t cp_error_key;
static pthread_once_t cp_error_once = PTHREAD_ONCE_INIT;
static int cp_error_key_ok;

static void free_error_buffer(void *buf) {
    free(buf);
    cp_error_buffer = NULL;
}

static void make_error_key(void) { cp_error_key_ok = pthread_key_create(&cp_error_key, free_error_buffer) == 0; }

static char *error_buffer(void) {
    if (cp_error_buffer == NULL) {
        pthread_once(&cp_error_once, make_error_key);
        if (!cp_error_key_ok) {
            return NULL; /* a buffer nobody would free: report the fallback message instead */
        }
        char *buf = calloc(1, CP_ERROR_SIZE);
        if (buf != NULL && pthread_setspecific(cp_error_key, buf) != 0) {
            free(buf);
            buf = NULL;
        }
        cp_error_buffer = buf;
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

/* The row that the calling thread's error messages count rows from (cp_set_row_origin): a thread
   of its own per caller, as the message buffer, since Dask runs one partition per thread. */
static __thread int64_t cp_row_origin_value;

void cp_store_row_origin(int64_t first) { cp_row_origin_value = first; }

int64_t cp_load_row_origin(void) { return cp_row_origin_value; }

/* Kept in step with python/combpred/_version.py: the package refuses a library of another version. */
__attribute__((visibility("default"))) const char *cp_version(void) { return "0.1.0"; }

int cp_call_progress(cp_progress_fn fn, int64_t iteration, double objective, double rel_grad, void *ctx) {
    return fn(iteration, objective, rel_grad, ctx);
}

int cp_call_sums(cp_sums_fn fn, const double *coef, int64_t rows, int64_t d, int64_t weight_exponent, double *loss, double *weight, double *grad, void *ctx) {
    return fn(coef, rows, d, weight_exponent, loss, weight, grad, ctx);
}

int cp_call_products(cp_products_fn fn, const double *v, int64_t rows, int64_t d, double *out, void *ctx) {
    return fn(v, rows, d, out, ctx);
}
