/*
 * rte: the run-time environment as the MPI library sees it.
 *
 * Everything above runtime/ learns about the job only through this
 * interface, so ranks run unchanged under Rail's mpirun, Slurm's
 * `srun --mpi=pmix`, Open MPI's mpirun or any other PMIx server.  The
 * implementation is a PMIx client (runtime/rte_pmix.c).  Without any PMIx
 * server the process runs as a singleton (a 1-rank job).
 */
#ifndef RUNTIME_RTE_H
#define RUNTIME_RTE_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <sys/statvfs.h>

typedef struct rte_info {
    int rank;              /* rank in the job (MPI_COMM_WORLD) */
    int size;              /* ranks in the job */
    int local_rank;        /* rank among the job's processes on this node */
    int local_size;        /* the job's processes on this node */
    int node_rank;         /* rank among all processes on this node */
    uint32_t node_id;      /* this node's index, 0 .. num_nodes-1 */
    int num_nodes;         /* nodes the job spans */
    int *local_peers;      /* job ranks on this node, ascending, local_size entries */
    int appnum;            /* MPMD application number (0 for SPMD) */
    int universe_size;     /* value for MPI_UNIVERSE_SIZE */
    int num_cpus;          /* CPUs this process may run on (its cpuset) */
    int node_cpus;         /* CPUs of the node the job may use: the launcher's cpuset,
                            * at most what the cgroup's CPU quota allows (0: unknown) */
    int kernel_size;       /* the job's processes on this machine's kernel: local_size,
                            * plus those of other hosts that share the kernel
                            * (network namespaces, containers; rte_kernel.c) */
    bool oversubscribed;   /* more ranks than node_cpus (local_size, or kernel_size once
                            * rte_kernel_update ran): waits must sleep, not spin */
    bool singleton;        /* started without a launcher */
    char nspace[256];      /* job namespace (PMIx nspace) */
    char hostname[256];    /* this node's name as the launcher knows it */
    char jobid[64];        /* short unique job id, usable in file names (/dev/shm):
                            * [A-Za-z0-9._] only; see "Job ids" below */
} rte_info_t;

/*
 * Job ids and shared memory.
 *
 * rte_info.jobid is derived from the PMIx namespace, identically in every
 * rank: under Rail's mpirun the namespace is "rail.<jobid>" and the jobid is
 * what follows "rail."; under another launcher it is the namespace with every
 * character outside [A-Za-z0-9._] replaced by '_' (or, when longer than 40
 * characters, "h" + 16 hex digits of a hash of it); a singleton uses "s"
 * followed by hex digits of its pid and of a random number.
 *
 * Shared-memory segments (and any other file a job creates in /dev/shm) must
 * be named /dev/shm/rail-<jobid>-*, i.e. shm_open() names RTE_SHM_PREFIX
 * "<jobid>-...": when a job ends, however it ends, Rail's launcher removes
 * every /dev/shm entry whose name starts with "rail-<jobid>-".  rte_shm_name()
 * builds such a name.
 */
#define RTE_SHM_PREFIX "rail-"

/* Filled by rte_init(); read-only afterwards. */
extern rte_info_t rte_info;

/* Register the rte's parameters (rte_init does too; registering again keeps
 * the values). */
int rte_register_params(void);

/* CPUs the CPU quota of this process's cgroup allows, rounded up (v2
 * cpu.max, v1 cpu.cfs_quota_us / cpu.cfs_period_us; the smallest over the
 * cgroup and its ancestors, see rte_cgroup.c), or 0 where there is no
 * quota.  root: NULL or "" for this machine's /proc and /sys, else a
 * directory holding a fake proc/self/cgroup and sys/fs/cgroup (tests; the
 * parameter rte_cgroup_root). */
int rte_cgroup_cpu_limit(const char *root);

/* Connect to the launcher (or become a singleton).  Idempotent; returns
 * MPI_SUCCESS or an MPI error class; prints a clear message when the process
 * was started in a way that cannot work (e.g. srun without --mpi=pmix). */
int rte_init(void);
int rte_finalize(void);

/* Business card exchange.  Values put before a fence are visible to every
 * rank after it; keys are short strings, values are byte blobs. */
int rte_modex_put(const char *key, const void *data, size_t len);
int rte_modex_commit(void);
/* Collective over the whole job.  collect = true also gathers the modex. */
int rte_fence(bool collect);
/* Value a rank put under key; *data is malloc()ed, the caller frees it.
 * Without a collecting fence before, the value is fetched from the rank's
 * host when asked (direct modex), waiting until that rank has committed it.
 * MPI_ERR_OTHER when the rank put no such key. */
int rte_modex_get(int rank, const char *key, void **data, size_t *len);

/* Hosts sharing one kernel (runtime/rte_kernel.c): rte_kernel_put puts
 * this kernel's boot id in the modex (rte_init calls it); after a
 * collecting fence rte_kernel_update sets kernel_size, and sets
 * oversubscribed when kernel_size exceeds node_cpus. */
int rte_kernel_put(void);
int rte_kernel_update(void);

/* Node index of a rank (same numbering as rte_info.node_id); -1 if unknown. */
int rte_node_of(int rank);
/* Host name of a rank, for messages; returns a static string or "?". */
const char *rte_hostname_of(int rank);

/* "/rail-<jobid>-<suffix>" for shm_open() (the file is /dev/shm/rail-<jobid>-<suffix>).
 * MPI_ERR_ARG when it does not fit in size bytes or suffix holds a '/'. */
int rte_shm_name(char *buf, size_t size, const char *suffix);

/* Bytes /dev/shm has free for us now (SIZE_MAX where statvfs cannot
 * tell): btl sm sizes its rings and coll sm its segments by it. */
static inline size_t rte_shm_free(void)
{
    struct statvfs v;
    if (statvfs("/dev/shm", &v) != 0 || v.f_frsize == 0)
        return SIZE_MAX;
    return (size_t)v.f_bavail * (size_t)v.f_frsize;
}

/* End the whole job: tell the launcher, which kills every rank; print msg
 * first when not NULL.  Does not return.  The job's exit status is code & 255,
 * or 1 when that is 0 (an abort is never a success). */
void rte_abort(int code, const char *msg) __attribute__((noreturn));

#endif
