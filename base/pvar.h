/*
 * The performance-variable registry: every MPI_T performance variable is
 * registered once, by the component that owns it (usually from its
 * *_register_params function, so that the variables exist when
 * MPI_T_init_thread registers the parameters), with a name, description,
 * class, level, flags and value type, and where its value comes from:
 *     a counter      a uint64_t of the component, read with a relaxed
 *                    atomic load (the hot path keeps its plain increment)
 *     a sample       a function called with an argument the component
 *                    chose (live objects of a kind, the process clock)
 * The front end (mpi/mpit_pvar.c) serves MPI_T from this table and knows
 * nothing of the components; categories and railinfo read it too.
 *
 * Indices are stable: the registry only appends, and lives as long as the
 * process.  Registering a name again with the same definition (a second
 * MPI_T_init_thread, MPI_Init, an MPI session) changes nothing; with
 * another definition it is refused (two owners of one name).  Every
 * function is thread safe.
 *
 * Names follow the parameters' rule: lower case, starting with their layer
 * or component ("coll_sm_segments_created"), which also puts the variable
 * in its MPI_T category.
 */
#ifndef BASE_PVAR_H
#define BASE_PVAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum rail_pvar_type {
    RAIL_PVAR_UNSIGNED, /* MPI_UNSIGNED_LONG_LONG: the raw value */
    RAIL_PVAR_DOUBLE,   /* MPI_DOUBLE: the raw value times the scale */
} rail_pvar_type_t;

/* Flags, as MPI_T_pvar_get_info reports them. */
enum {
    RAIL_PVAR_CONTINUOUS = 1 << 0, /* always running: no start or stop */
    RAIL_PVAR_READONLY = 1 << 1,   /* cannot be written or reset */
    RAIL_PVAR_ATOMIC = 1 << 2,     /* can be read and reset in one step */
};

/* The raw value of a sampled variable.  For a variable that is not
 * continuous it must only grow: MPI_T adds up its differences while a
 * handle is started. */
typedef uint64_t (*rail_pvar_sample_fn)(const void *arg);

typedef struct rail_pvar {
    const char *name;
    const char *desc;
    int var_class;              /* MPI_T_PVAR_CLASS_* */
    int level;                  /* 1..9, as a parameter's (RAIL_PARAM_LEVEL_*) */
    unsigned flags;             /* RAIL_PVAR_* */
    rail_pvar_type_t type;
    const uint64_t *counter;    /* the raw value, or NULL ... */
    rail_pvar_sample_fn sample; /* ... and this, called with arg */
    const void *arg;
    double scale;               /* RAIL_PVAR_DOUBLE: value = raw * scale (> 0); else 0 */
} rail_pvar_t;

/* Register a variable; the registry copies def and its strings.
 * MPI_ERR_ARG, with a warning saying why, when def is malformed (not
 * exactly one of counter and sample, a double without a scale, an unknown
 * class) or its name was registered with another definition;
 * MPI_ERR_NO_MEM. */
int rail_pvar_register(const rail_pvar_t *def);

/* An event counter of this process: class COUNTER, level TUNER, unsigned,
 * continuous and readonly. */
typedef struct rail_pvar_counter {
    const char *name;
    const char *desc;
    const uint64_t *counter;
} rail_pvar_counter_t;

/* Register each counter of a table; the first error, the others still
 * registered. */
int rail_pvar_register_counters(const rail_pvar_counter_t *table, size_t n);

int rail_pvar_count(void);
/* The variable at index (0 .. rail_pvar_count() - 1), else NULL.  The
 * pointer stays valid for the life of the process. */
const rail_pvar_t *rail_pvar_at(int index);
const rail_pvar_t *rail_pvar_find(const char *name);
/* Index of the variable called name, or -1. */
int rail_pvar_index(const char *name);

/* The raw value now. */
uint64_t rail_pvar_sample(const rail_pvar_t *v);
/* A raw value as the variable's type (unsigned long long or double) into
 * buf. */
void rail_pvar_store(const rail_pvar_t *v, uint64_t raw, void *buf);
/* The raw value of a value of the variable's type at buf; false when it
 * has none (a negative or too large double). */
bool rail_pvar_raw_of(const rail_pvar_t *v, const void *buf, uint64_t *raw);

/* "counter", "timer", ... for the info tool. */
const char *rail_pvar_class_name(int var_class);

#endif
