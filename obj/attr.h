/*
 * Attribute caching on communicators, datatypes and windows: keyvals with
 * copy and delete callbacks, called when an object is duplicated (copy) or
 * freed / the attribute replaced or deleted (delete).
 */
#ifndef OBJ_ATTR_H
#define OBJ_ATTR_H

#include "obj/obj.h"

typedef enum { OBJ_ATTR_COMM, OBJ_ATTR_TYPE, OBJ_ATTR_WIN } obj_attr_kind_t;

struct obj_attr_list;   /* per object, NULL when empty */

/* Run every copy callback of src's attributes for a duplicate; the new
 * object's handle is passed to the callbacks.  *dst receives the list. */
int obj_attr_copy_all(obj_attr_kind_t kind, void *old_handle, struct obj_attr_list *src,
                      struct obj_attr_list **dst);
/* Run every delete callback and empty the list (object being freed). */
int obj_attr_delete_all(obj_attr_kind_t kind, void *handle, struct obj_attr_list **list);

int obj_attr_set(obj_attr_kind_t kind, void *handle, struct obj_attr_list **list, int keyval,
                 void *value);
int obj_attr_get(obj_attr_kind_t kind, struct obj_attr_list *list, int keyval, void *value_out,
                 int *flag);
int obj_attr_delete(obj_attr_kind_t kind, void *handle, struct obj_attr_list **list, int keyval);

/* A keyval of kind with its callbacks, where 0 and 1 stand for the
 * standard's NULL and DUP functions; freeing one (MPI_ERR_KEYVAL for an
 * invalid or predefined keyval).  A freed keyval lives on while attributes
 * use it. */
int obj_attr_keyval_create(obj_attr_kind_t kind, void (*copy)(void), void (*del)(void),
                           void *extra, int *out);
int obj_attr_keyval_free(obj_attr_kind_t kind, int *id);

/* The predefined keyvals (MPI_TAG_UB ... MPI_WIN_MODEL), whose attributes
 * cannot be set or deleted; obj_attr_comm_predef gives the value of a
 * communicator's (true) or says it is not one (false, *flag = 0). */
bool obj_attr_is_predef(int keyval);
bool obj_attr_comm_predef(int keyval, void *value_out, int *flag);

/* Live keyvals (for leak checks). */
int obj_attr_live_keyvals(void);

#endif
