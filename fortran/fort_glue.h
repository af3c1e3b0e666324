/*
 * Helpers of the generated Fortran glue (fortran/gen/fort_f77.c and
 * fort_f08.c): sentinels recognised by address, strings, statuses, handle
 * arrays, and choice buffers given as TS 29113 descriptors (fort_buf.c).
 */
#ifndef FORT_GLUE_H
#define FORT_GLUE_H

#include <ISO_Fortran_binding.h>
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* Storage of the Fortran sentinels (common blocks of mpif.h / the modules). */
extern MPI_Fint mpi_fort_bottom_, mpi_fort_in_place_, mpi_fort_buffer_automatic_;
extern MPI_Fint mpi_fort_status_ignore_[MPI_F_STATUS_SIZE];
extern MPI_Fint mpi_fort_statuses_ignore_[MPI_F_STATUS_SIZE];
extern MPI_Fint mpi_fort_status_ignore_f08_[MPI_F_STATUS_SIZE];
extern MPI_Fint mpi_fort_statuses_ignore_f08_[MPI_F_STATUS_SIZE];
extern MPI_Fint mpi_fort_errcodes_ignore_[1], mpi_fort_unweighted_[1];
extern MPI_Fint mpi_fort_weights_empty_[1];

/* A choice buffer's address: the Fortran sentinels become the C ones. */
void *fort_addr(const void *p);
/* Status outputs: MPI_STATUS(ES)_IGNORE of either binding become the C ones. */
MPI_Status *fort_status(MPI_Fint *s);
MPI_Status *fort_statuses(MPI_Fint *s);

/* Strings: a NUL-terminated copy of a blank-padded Fortran string (malloc),
 * a C buffer for an output string, and copying it back blank-padded. */
char *fort_cstr(const char *s, size_t len);
char *fort_cbuf(const char *s, size_t len);
void fort_fstr(int rc, char *dst, size_t len, char *src);

/* Arrays of handles: room for n C handles (sets *rc on failure). */
void *fort_halloc(MPI_Count n, size_t size, int *rc);
MPI_Count fort_comm_peer_size(MPI_Comm comm);

/* An error of the glue itself (memory, a section it cannot describe):
 * raised on MPI_COMM_SELF's errhandler, as errors tied to no object are. */
int fort_raise(int rc);

/* Index outputs of Waitany/Testsome...: Fortran counts from 1. */
void fort_index_out(int rc, MPI_Fint *idx, int n);
/* Attribute values as Fortran sees them (predefined ones by value). */
intptr_t fort_attr_value(int keyval, void *val);

/* Choice buffers of mpi_f08 (fort_buf.c). */
enum { FORT_IN = 1, FORT_OUT = 2, FORT_RETAINED = 4 };
typedef struct fort_buf {
    void *addr;          /* what the C call gets */
    MPI_Count count;     /* count and datatype the C call gets */
    MPI_Datatype type;
    void *tmp;           /* packed copy of a section (blocking calls) */
    CFI_cdesc_t *desc;
    int mode;
    MPI_Datatype made;   /* datatype built for a section, freed at the end */
} fort_buf_t;
int fort_buf_begin(fort_buf_t *b, CFI_cdesc_t *d, MPI_Count count, MPI_Datatype type, int mode);
void fort_buf_end(fort_buf_t *b, int rc);

#endif
