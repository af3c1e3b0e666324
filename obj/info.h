/* Info objects: ordered (key, value) string pairs. */
#ifndef OBJ_INFO_H
#define OBJ_INFO_H

#include "obj/obj.h"

struct MPI_ABI_Info {
    obj_t obj;
    int n, cap;
    char **keys;
    char **values;
};

/* Internal use by other objects (comm/win hints): value or NULL. */
const char *obj_info_value(const obj_info_t *info, const char *key);
int obj_info_set_value(obj_info_t *info, const char *key, const char *value);
obj_info_t *obj_info_new(void);
int obj_info_copy(const obj_info_t *src, obj_info_t **out);
void obj_info_release(obj_info_t *info);
/* Remove key (MPI_ERR_INFO_NOKEY when it is not set). */
int obj_info_delete(obj_info_t *info, const char *key);
/* The keys of MPI_INFO_ENV (command, argv, maxprocs, host, arch, wdir,
 * thread_level) for a program started with argc/argv. */
void obj_info_fill_env(obj_info_t *info, int argc, char **argv, int thread_level);
/* MPI_INFO_ENV, at MPI_Init or the first session. */
int obj_info_predef_init(int argc, char **argv, int thread_level);
extern obj_info_t obj_info_env;

#endif
