/* Error classes, codes and strings: the predefined classes (generated from
 * the API spec) and the classes, codes and strings users add and remove.
 *
 * User codes live in one array indexed by code - MPI_ERR_LASTCODE - 1.  A
 * class counts its live codes, so removing a class is O(1); removed slots
 * wait on a FIFO list and are reused oldest first (a stale code names a new
 * one as late as possible), so add and remove are O(1) amortised and the
 * array stays as large as the most codes alive at once. */
#include "obj/errcode.h"
#include "obj/err.h"

#include <mpi.h>
#include <stdbool.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct user_code {
    int cls;         /* its class (itself for a class) */
    bool is_class;
    bool in_use;
    int ncodes;      /* a class: its live codes */
    int next_free;   /* free: the next slot of the FIFO list, or -1 */
    char *string;
} user_code_t;

static user_code_t *user_codes;
static int n_user, cap_user;
static int free_head = -1, free_tail = -1;
static pthread_mutex_t code_lock = PTHREAD_MUTEX_INITIALIZER;
int obj_errcode_lastused = MPI_ERR_LASTCODE;

static user_code_t *user_entry(int code)
{
    int i = code - MPI_ERR_LASTCODE - 1;
    if (i < 0 || i >= n_user || !user_codes[i].in_use)
        return NULL;
    return &user_codes[i];
}

bool obj_errcode_is_predefined(int code)
{
    return obj_errclass_name(code) != NULL;
}

int obj_errcode_class(int code)
{
    if (obj_errcode_is_predefined(code))
        return code;
    pthread_mutex_lock(&code_lock);
    user_code_t *u = user_entry(code);
    int cls = u ? u->cls : MPI_ERR_UNKNOWN;
    pthread_mutex_unlock(&code_lock);
    return cls;
}

const char *obj_errcode_class_name(int cls)
{
    const char *n = obj_errclass_name(cls);
    return n ? n : "user-defined error class";
}

int obj_errcode_string(int code, char *buf, int *len)
{
    const char *s = NULL;
    int rc = MPI_SUCCESS;
    pthread_mutex_lock(&code_lock);
    if (obj_errcode_is_predefined(code)) {
        s = obj_errclass_string(code);
    } else {
        user_code_t *u = user_entry(code);
        if (u)
            s = u->string ? u->string : "";
        else
            rc = MPI_ERR_ARG;
    }
    snprintf(buf, MPI_MAX_ERROR_STRING, "%s", s ? s : "unknown error code");
    pthread_mutex_unlock(&code_lock);
    *len = (int)strlen(buf);
    return rc;
}

/* A slot for a new code: the oldest free one, else a new one at the end;
 * -1 when out of memory. */
static int slot_take(void)
{
    if (free_head >= 0) {
        int i = free_head;
        free_head = user_codes[i].next_free;
        if (free_head < 0)
            free_tail = -1;
        return i;
    }
    if (n_user == cap_user) {
        int ncap = cap_user ? 2 * cap_user : 16;
        user_code_t *n = realloc(user_codes, (size_t)ncap * sizeof(*n));
        if (!n)
            return -1;
        user_codes = n;
        cap_user = ncap;
    }
    return n_user++;
}

static void slot_give(int i)
{
    free(user_codes[i].string);
    user_codes[i] = (user_code_t){.in_use = false, .next_free = -1};
    if (free_tail >= 0)
        user_codes[free_tail].next_free = i;
    else
        free_head = i;
    free_tail = i;
}

static int add_code(int cls, bool is_class, int *out)
{
    pthread_mutex_lock(&code_lock);
    user_code_t *owner = is_class ? NULL : user_entry(cls);
    int rc = MPI_SUCCESS, i = -1;
    if (!is_class && !obj_errcode_is_predefined(cls) && !(owner && owner->is_class))
        rc = obj_errf(MPI_ERR_ARG, "%d is not an error class", cls);
    else if ((i = slot_take()) < 0)
        rc = obj_errf(MPI_ERR_NO_MEM, "out of memory adding an error code");
    if (rc == MPI_SUCCESS) {
        int code = MPI_ERR_LASTCODE + 1 + i;
        user_codes[i] = (user_code_t){is_class ? code : cls, is_class, true, 0, -1, NULL};
        if (owner)   /* slot_take may have moved the array */
            user_entry(cls)->ncodes++;
        if (code > obj_errcode_lastused)
            obj_errcode_lastused = code;
        *out = code;
    }
    pthread_mutex_unlock(&code_lock);
    return rc;
}

int obj_errcode_add_class(int *errorclass)
{
    return add_code(0, true, errorclass);
}

int obj_errcode_add_code(int errorclass, int *errorcode)
{
    return add_code(errorclass, false, errorcode);
}

int obj_errcode_set_string(int errorcode, const char *string)
{
    pthread_mutex_lock(&code_lock);
    user_code_t *u = user_entry(errorcode);
    if (!u) {
        pthread_mutex_unlock(&code_lock);
        return obj_errf(MPI_ERR_ARG, obj_errcode_is_predefined(errorcode)
                                         ? "cannot change the string of predefined error code %d"
                                         : "invalid error code %d",
                        errorcode);
    }
    free(u->string);
    u->string = strdup(string);
    pthread_mutex_unlock(&code_lock);
    return MPI_SUCCESS;
}

int obj_errcode_remove(int code, bool want_class)
{
    pthread_mutex_lock(&code_lock);
    user_code_t *u = user_entry(code);
    int rc = MPI_SUCCESS;
    if (!u || u->is_class != want_class) {
        rc = obj_errf(MPI_ERR_ARG, "%d is not a user-defined error %s", code,
                      want_class ? "class" : "code");
    } else if (want_class && u->ncodes > 0) {
        rc = obj_errf(MPI_ERR_ARG, "error class %d still has %d error codes", code, u->ncodes);
    } else {
        user_code_t *owner = want_class ? NULL : user_entry(u->cls);
        if (owner)
            owner->ncodes--;
        slot_give(code - MPI_ERR_LASTCODE - 1);
    }
    pthread_mutex_unlock(&code_lock);
    return rc;
}

int obj_errcode_remove_string(int errorcode)
{
    pthread_mutex_lock(&code_lock);
    user_code_t *u = user_entry(errorcode);
    if (u) {
        free(u->string);
        u->string = NULL;
    }
    pthread_mutex_unlock(&code_lock);
    return u ? MPI_SUCCESS : obj_errf(MPI_ERR_ARG, "%d is not a user-defined error code", errorcode);
}
