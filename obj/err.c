/* Error details (see obj/err.h). */
#include "obj/err.h"
#include "obj/errcode.h"

#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>

static __thread char err_detail[1024];
static __thread int err_detail_code;

int obj_errf(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err_detail, sizeof(err_detail), fmt, ap);
    va_end(ap);
    err_detail_code = code;
    return code;
}

void obj_err_take(int code, char *buf, size_t len)
{
    if (err_detail[0] && err_detail_code == code) {
        snprintf(buf, len, "%s", err_detail);
    } else {
        int rlen;
        char text[MPI_MAX_ERROR_STRING];
        obj_errcode_string(code, text, &rlen);
        snprintf(buf, len, "%s", text);
    }
    err_detail[0] = '\0';
}
