/* Win objects: what the API sees of a window.  The one-sided layer (osc/)
 * fills in the rest behind `osc`. */
#ifndef OBJ_WIN_H
#define OBJ_WIN_H

#include "obj/obj.h"

struct osc_win;
struct obj_attr_list;

struct MPI_ABI_Win {
    obj_t obj;
    obj_errhandler_t *errhandler;
    char name[MPI_MAX_OBJECT_NAME];
    void *base;               /* MPI_WIN_BASE (MPI_BOTTOM for dynamic windows) */
    MPI_Aint size;            /* MPI_WIN_SIZE */
    MPI_Aint disp_unit;       /* displacement unit */
    int disp_unit_attr;       /* MPI_WIN_DISP_UNIT (an int, as the attribute is) */
    int flavor;               /* MPI_WIN_FLAVOR_* */
    int model;                /* MPI_WIN_UNIFIED */
    obj_info_t *info;         /* hints in use (MPI_Win_get_info) */
    struct obj_attr_list *attrs;
    struct osc_win *osc;      /* one-sided layer state */
};

static inline obj_errhandler_t *obj_win_errhandler(obj_win_t *o) { return o->errhandler; }

#endif
