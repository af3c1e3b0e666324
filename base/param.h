/*
 * The parameter registry: every tunable is registered once, with a name,
 * type, default, help text and level.  From that one registration it is
 * settable by
 *     environment      RAIL_<NAME>          (mpirun --param name=value sets it)
 *     user file        ~/.rail/params.conf   "name = value" lines
 *     system file      <prefix>/etc/rail-params.conf
 *     MPI_T            rail_param_set()
 * (highest precedence first) and listed, with value and origin, by railinfo.
 * Registering resolves the value at once and stores it in the caller's
 * variable, so hot paths read a plain variable.  Registering a name again
 * (e.g. a second MPI session) points it at the new variable and keeps the
 * resolved value.  The registry lives as long as the process.
 *
 * Names are lower case with underscores and start with their layer or
 * framework: "btl", "btl_sm_eager_limit", "coll_tuned_allreduce_algorithm".
 * The environment variable is "RAIL_" + the name in upper case.
 */
#ifndef BASE_PARAM_H
#define BASE_PARAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum rail_param_type {
    RAIL_PARAM_INT,     /* int */
    RAIL_PARAM_BOOL,    /* bool: 1/0, true/false, yes/no, on/off */
    RAIL_PARAM_SIZE,    /* size_t: bytes, accepts k/m/g suffixes (powers of 1024) */
    RAIL_PARAM_DOUBLE,  /* double */
    RAIL_PARAM_STRING,  /* const char *, owned by the registry */
} rail_param_type_t;

typedef enum rail_param_source {
    RAIL_PARAM_SRC_DEFAULT,
    RAIL_PARAM_SRC_SYSTEM_FILE,
    RAIL_PARAM_SRC_USER_FILE,
    RAIL_PARAM_SRC_ENV,
    RAIL_PARAM_SRC_API,
} rail_param_source_t;

/* Levels follow MPI_T verbosity: 1-3 user, 4-6 tuner, 7-9 developer. */
enum { RAIL_PARAM_LEVEL_USER = 1, RAIL_PARAM_LEVEL_TUNER = 4, RAIL_PARAM_LEVEL_DEV = 7 };

/* What a parameter is for, besides its level (rail_param_set_flags):
 *   TEST      a knob for the test suite (forcing a path, a fault, a tiny
 *             size); railinfo --all and docs/params.md leave it out
 *             (railinfo --all --test lists it);
 *   MEASURED  its default was chosen by timing on a particular machine,
 *             not derived from a principle; bench/tune_params.py measures
 *             it again on another machine;
 *   DYNAMIC   read at every use, so it may change while MPI runs: MPI_T
 *             reports a writable scope and accepts writes after MPI_Init
 *             (every other parameter is read when MPI comes up). */
enum { RAIL_PARAM_F_TEST = 1u << 0, RAIL_PARAM_F_MEASURED = 1u << 1, RAIL_PARAM_F_DYNAMIC = 1u << 2 };

typedef struct rail_param {
    const char *name;
    rail_param_type_t type;
    const char *help;
    int level;
    void *storage;            /* the caller's variable */
    char *default_str;        /* default value as text */
    rail_param_source_t source;
    char *origin;             /* "default", "environment (RAIL_X)", "/path:line", "MPI_T" */
    const char *choices;      /* optional "a|b|c" for string parameters, else NULL */
    unsigned flags;           /* RAIL_PARAM_F_* */
} rail_param_t;

int rail_param_register_int(const char *name, int def, const char *help, int level, int *storage);
int rail_param_register_bool(const char *name, bool def, const char *help, int level, bool *storage);
int rail_param_register_size(const char *name, size_t def, const char *help, int level,
                             size_t *storage);
int rail_param_register_double(const char *name, double def, const char *help, int level,
                               double *storage);
/* choices: NULL for free text, or "a|b|c" (a value outside them is warned
 * about and the default kept). */
int rail_param_register_string(const char *name, const char *def, const char *choices,
                               const char *help, int level, const char **storage);

/* Add RAIL_PARAM_F_* flags to the registered parameter called name
 * (MPI_ERR_ARG when there is none). */
int rail_param_set_flags(const char *name, unsigned flags);

/* Set a parameter by name from text (MPI_T, tests).  MPI_ERR_ARG when the
 * name is unknown or the value does not parse. */
int rail_param_set(const char *name, const char *value, rail_param_source_t source);

int rail_param_count(void);
const rail_param_t *rail_param_at(int index);
const rail_param_t *rail_param_find(const char *name);
/* Index (for rail_param_at) of the parameter called name, or -1. */
int rail_param_index(const char *name);
/* Current value as text. */
void rail_param_value_string(const rail_param_t *p, char *buf, size_t len);
const char *rail_param_type_name(rail_param_type_t t);

/* Warn once about RAIL_* environment variables and config-file entries that
 * name no registered parameter (call after every framework registered). */
void rail_param_check_unknown(void);

/* Parse a size such as "64k", "8M", "1048576"; false when malformed. */
bool rail_param_parse_size(const char *s, size_t *out);
/* Parse a boolean word; false when malformed. */
bool rail_param_parse_bool(const char *s, bool *out);

#endif
