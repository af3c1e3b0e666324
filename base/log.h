/*
 * Messages to the user.  Every line is prefixed with "rail" and, once known,
 * the rank and host ("rail[3@node2]: warning: ...").  Verbose output is
 * controlled by the per-framework parameters <framework>_verbose (0 = off).
 */
#ifndef BASE_LOG_H
#define BASE_LOG_H

#include <stdarg.h>

/* Identify this process in messages (called by the rte once it knows). */
void rail_log_set_identity(int rank, const char *host);

void rail_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void rail_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print once per process for a given call site's message id. */
void rail_warn_once(const char *id, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void rail_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void rail_vlog(const char *what, const char *fmt, va_list ap);

/* Verbose messages of a framework: RAIL_VERBOSE(btl_verbose, 1, "..."). */
#define RAIL_VERBOSE(level_var, level, ...)                                                       \
    do {                                                                                           \
        if ((level_var) >= (level))                                                                \
            rail_info(__VA_ARGS__);                                                                \
    } while (0)

#endif
