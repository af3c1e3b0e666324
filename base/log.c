/* Messages to the user, prefixed with who is speaking. */
#include "base/rail.h"
#include "base/log.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char log_prefix[300] = "rail";
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

void rail_log_set_identity(int rank, const char *host)
{
    if (host && host[0])
        snprintf(log_prefix, sizeof(log_prefix), "rail[%d@%s]", rank, host);
    else
        snprintf(log_prefix, sizeof(log_prefix), "rail[%d]", rank);
}

void rail_vlog(const char *what, const char *fmt, va_list ap)
{
    char line[2048];
    int n = snprintf(line, sizeof(line), "%s: %s%s", log_prefix, what ? what : "",
                     what && what[0] ? ": " : "");
    if (n < 0 || (size_t)n >= sizeof(line))
        n = 0;
    vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
    size_t len = strlen(line);
    if (len == 0 || line[len - 1] != '\n') {
        if (len + 1 < sizeof(line)) {
            line[len++] = '\n';
            line[len] = '\0';
        } else {
            line[len - 1] = '\n';
        }
    }
    /* One write per message, so lines of different threads never mix. */
    pthread_mutex_lock(&log_lock);
    fputs(line, stderr);
    fflush(stderr);
    pthread_mutex_unlock(&log_lock);
}

void rail_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    rail_vlog("warning", fmt, ap);
    va_end(ap);
}

void rail_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    rail_vlog("error", fmt, ap);
    va_end(ap);
}

void rail_info(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    rail_vlog("", fmt, ap);
    va_end(ap);
}

/* A small fixed set of ids is enough: warn_once is for rare conditions. */
#define WARN_ONCE_SLOTS 64
static const char *warned_ids[WARN_ONCE_SLOTS];

void rail_warn_once(const char *id, const char *fmt, ...)
{
    pthread_mutex_lock(&log_lock);
    for (int i = 0; i < WARN_ONCE_SLOTS; i++) {
        if (warned_ids[i] && strcmp(warned_ids[i], id) == 0) {
            pthread_mutex_unlock(&log_lock);
            return;
        }
        if (!warned_ids[i]) {
            warned_ids[i] = id;
            break;
        }
    }
    pthread_mutex_unlock(&log_lock);
    va_list ap;
    va_start(ap, fmt);
    rail_vlog("warning", fmt, ap);
    va_end(ap);
}
