/*
 * Hardware resources for MPI_Comm_split_type (HW_GUIDED, HW_UNGUIDED,
 * RESOURCE_GUIDED): which object of an hwloc type this process runs in.
 *
 * The topology is loaded on first use (without I/O objects) and kept.  A
 * process is "in" an object when its CPU binding (its affinity mask) is
 * inside the object's cpuset; an unbound process is in the objects that
 * contain all of its CPUs only (the machine, one package if it has one).
 * Colors are node id * 65536 + the object's logical index, so objects of
 * different nodes never share a color.
 *
 * MPI_Get_hw_resource_info describes the same: key "mpi_hw_resource_type"
 * lists, outermost first, the types ("hwloc://Package", ...) of the objects
 * this process runs inside (each usable with MPI_COMM_TYPE_HW_GUIDED), and
 * a key per such type gives "<logical index>/<objects of that type on the
 * node>".
 */
#include "obj/comm_int.h"
#include "obj/info.h"
#include "runtime/rte.h"

#include <stdio.h>

#include <hwloc.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <strings.h>

const char *const comm_hw_levels[] = {"Machine", "Package", "Die",     "NUMANode", "L3Cache",
                                      "L2Cache", "L1Cache", "Core",    "PU",       NULL};

static hwloc_topology_t topo;
static hwloc_bitmap_t mycpus;
static bool loaded, load_failed;
static pthread_mutex_t hw_lock = PTHREAD_MUTEX_INITIALIZER;

/* This process's CPUs, as the topology numbers them. */
static void my_cpus(void)
{
    mycpus = hwloc_bitmap_alloc();
    if (hwloc_get_cpubind(topo, mycpus, HWLOC_CPUBIND_PROCESS) == 0 &&
        !hwloc_bitmap_iszero(mycpus))
        return;
    cpu_set_t set;
    hwloc_bitmap_zero(mycpus);
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        for (int i = 0; i < CPU_SETSIZE; i++)
            if (CPU_ISSET(i, &set))
                hwloc_bitmap_set(mycpus, (unsigned)i);
    }
    hwloc_bitmap_and(mycpus, mycpus, hwloc_topology_get_complete_cpuset(topo));
}

static bool load(void)
{
    pthread_mutex_lock(&hw_lock);
    if (!loaded && !load_failed) {
        load_failed = hwloc_topology_init(&topo) != 0;
        if (!load_failed) {
            hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_NONE);
            load_failed = hwloc_topology_load(topo) != 0;
            if (load_failed)
                hwloc_topology_destroy(topo);
        }
        if (!load_failed)
            my_cpus();
        loaded = !load_failed;
    }
    pthread_mutex_unlock(&hw_lock);
    return loaded;
}

/* Resource type names (after an optional "hwloc://"), case-insensitive. */
static const struct {
    const char *name;
    hwloc_obj_type_t type;
} type_names[] = {
    {"Machine", HWLOC_OBJ_MACHINE}, {"Package", HWLOC_OBJ_PACKAGE}, {"Socket", HWLOC_OBJ_PACKAGE},
    {"Die", HWLOC_OBJ_DIE},         {"NUMANode", HWLOC_OBJ_NUMANODE}, {"NUMA", HWLOC_OBJ_NUMANODE},
    {"L5Cache", HWLOC_OBJ_L5CACHE}, {"L4Cache", HWLOC_OBJ_L4CACHE}, {"L3Cache", HWLOC_OBJ_L3CACHE},
    {"L2Cache", HWLOC_OBJ_L2CACHE}, {"L1Cache", HWLOC_OBJ_L1CACHE}, {"L5", HWLOC_OBJ_L5CACHE},
    {"L4", HWLOC_OBJ_L4CACHE},      {"L3", HWLOC_OBJ_L3CACHE},       {"L2", HWLOC_OBJ_L2CACHE},
    {"L1", HWLOC_OBJ_L1CACHE},      {"L1d", HWLOC_OBJ_L1CACHE},      {"Core", HWLOC_OBJ_CORE},
    {"PU", HWLOC_OBJ_PU},
};

static bool parse_type(const char *name, hwloc_obj_type_t *type)
{
    if (strncasecmp(name, "hwloc://", 8) == 0)
        name += 8;
    for (size_t i = 0; i < RAIL_ARRAY_SIZE(type_names); i++) {
        if (strcasecmp(name, type_names[i].name) == 0) {
            *type = type_names[i].type;
            return true;
        }
    }
    return false;
}

static hwloc_obj_t my_obj(hwloc_obj_type_t type);

int comm_hw_color(const char *type_name, int *color, bool *known)
{
    hwloc_obj_type_t type;
    *color = MPI_UNDEFINED;
    *known = parse_type(type_name, &type);
    if (!*known || !load() || hwloc_bitmap_iszero(mycpus))
        return MPI_SUCCESS;
    hwloc_obj_t o = my_obj(type);
    if (o)
        *color = (int)(rte_info.node_id * 65536u + (o->logical_index & 0xffffu));
    return MPI_SUCCESS;
}

/* The object of `type` this process runs inside, or NULL. */
static hwloc_obj_t my_obj(hwloc_obj_type_t type)
{
    int n = hwloc_get_nbobjs_by_type(topo, type);
    for (int i = 0; i < n; i++) {
        hwloc_obj_t o = hwloc_get_obj_by_type(topo, type, (unsigned)i);
        if (o && o->cpuset && !hwloc_bitmap_iszero(o->cpuset) &&
            hwloc_bitmap_isincluded(mycpus, o->cpuset))
            return o;
    }
    return NULL;
}

void comm_hw_fini(void)
{
    pthread_mutex_lock(&hw_lock);
    if (loaded) {
        hwloc_bitmap_free(mycpus);
        hwloc_topology_destroy(topo);
        loaded = false;
    }
    load_failed = false;
    pthread_mutex_unlock(&hw_lock);
}

int obj_comm_hw_resource_info(obj_info_t **out)
{
    obj_info_t *info = obj_info_new();
    if (!info)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    char types[512] = "", key[64], val[64];
    int rc = MPI_SUCCESS;
    if (load() && !hwloc_bitmap_iszero(mycpus)) {
        for (int l = 0; comm_hw_levels[l] && rc == MPI_SUCCESS; l++) {
            hwloc_obj_type_t type;
            hwloc_obj_t o = parse_type(comm_hw_levels[l], &type) ? my_obj(type) : NULL;
            if (!o)
                continue;
            snprintf(key, sizeof(key), "hwloc://%s", comm_hw_levels[l]);
            snprintf(val, sizeof(val), "%u/%d", o->logical_index,
                     hwloc_get_nbobjs_by_type(topo, type));
            rc = obj_info_set_value(info, key, val);
            size_t used = strlen(types);
            snprintf(types + used, sizeof(types) - used, "%s%s", used ? "," : "", key);
        }
    }
    if (rc == MPI_SUCCESS && types[0])
        rc = obj_info_set_value(info, "mpi_hw_resource_type", types);
    if (rc != MPI_SUCCESS) {
        obj_info_release(info);
        return rc;
    }
    *out = info;
    return MPI_SUCCESS;
}
