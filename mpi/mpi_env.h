/* State of the MPI library in this process (the World and Sessions models). */
#ifndef MPI_MPI_ENV_H
#define MPI_MPI_ENV_H

#include <pthread.h>
#include <stdbool.h>
#include "obj/obj.h"
#include "obj/errhandler.h"

typedef struct mpi_env {
    bool initialized;        /* MPI_Init(_thread) was called */
    bool finalized;          /* MPI_Finalize was called */
    int thread_level;        /* provided level of the World model */
    pthread_t main_thread;   /* the thread that called MPI_Init */
    bool rte_up;             /* rte_init succeeded */
    bool core_up;            /* rte, accel, pml and predefined objects are up */
    int sessions;            /* open sessions */
    bool verbose_errors;     /* parameter mpi_show_errors: print errors even when returned */
    char **argv;             /* copy of the program's arguments, for MPI_INFO_ENV */
    int argc;
} mpi_env_t;

extern mpi_env_t mpi_env;

/* Bring up / tear down what both the World model and sessions need
 * (rte, parameters, accel, pml, predefined objects).  Reference counted. */
int mpi_env_core_up(int thread_level);
int mpi_env_core_down(void);
/* mpi_api_ready from the World model's state and the sessions open, under
 * the lock of the two above (threads may open and close sessions at once) */
void mpi_env_update_ready(void);

/* Every framework's parameters (used by MPI_Init and by the info tool). */
int mpi_params_register_all(void);

#endif
