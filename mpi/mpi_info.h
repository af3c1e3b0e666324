/* Info objects: ordered (key, value) string pairs. */
#ifndef MPI_MPI_INFO_H
#define MPI_MPI_INFO_H

#include "mpi/mpi_obj.h"

struct MPI_ABI_Info {
    mpi_obj_t obj;
    int n, cap;
    char **keys;
    char **values;
};

/* Internal use by other objects (comm/win hints): value or NULL. */
const char *mpi_info_value(const mpi_info_t *info, const char *key);
int mpi_info_set_value(mpi_info_t *info, const char *key, const char *value);
mpi_info_t *mpi_info_new(void);
int mpi_info_copy(const mpi_info_t *src, mpi_info_t **out);
void mpi_info_release(mpi_info_t *info);
extern mpi_info_t mpi_info_env;

#endif
