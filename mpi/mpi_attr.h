/*
 * Attribute caching on communicators, datatypes and windows: keyvals with
 * copy and delete callbacks, called when an object is duplicated (copy) or
 * freed / the attribute replaced or deleted (delete).
 */
#ifndef MPI_MPI_ATTR_H
#define MPI_MPI_ATTR_H

#include "mpi/mpi_obj.h"

typedef enum { MPI_ATTR_COMM, MPI_ATTR_TYPE, MPI_ATTR_WIN } mpi_attr_kind_t;

struct mpi_attr_list;   /* per object, NULL when empty */

/* Run every copy callback of src's attributes for a duplicate; the new
 * object's handle is passed to the callbacks.  *dst receives the list. */
int mpi_attr_copy_all(mpi_attr_kind_t kind, void *old_handle, struct mpi_attr_list *src,
                      struct mpi_attr_list **dst);
/* Run every delete callback and empty the list (object being freed). */
int mpi_attr_delete_all(mpi_attr_kind_t kind, void *handle, struct mpi_attr_list **list);

int mpi_attr_set(mpi_attr_kind_t kind, void *handle, struct mpi_attr_list **list, int keyval,
                 void *value);
int mpi_attr_get(mpi_attr_kind_t kind, struct mpi_attr_list *list, int keyval, void *value_out,
                 int *flag);
int mpi_attr_delete(mpi_attr_kind_t kind, void *handle, struct mpi_attr_list **list, int keyval);

/* Live keyvals (for leak checks). */
int mpi_attr_live_keyvals(void);

#endif
