/* MPI_T events and event sources.
 *
 * Rail MPI defines no event types (MPI-4.1 allows none): MPI_T_event_get_num
 * is 0, so every event index is MPI_T_ERR_INVALID_INDEX, every name
 * MPI_T_ERR_INVALID_NAME, and since no registration can be made and no
 * instance delivered, every registration or instance handle is
 * MPI_T_ERR_INVALID_HANDLE.
 *
 * One source of timestamps: source 0, "process_clock", the monotonic clock
 * of this process in nanoseconds (CLOCK_MONOTONIC), ordered.
 */
#include "mpi/mpit.h"
#include "obj/info.h"
#include "mpi/binding/gen/mpi_impl.h"

#include <stdint.h>
#include <time.h>

/* ------------------------------------------------------------ sources */

static int source_get_num(int *num_sources)
{
    if (!num_sources)
        return MPI_T_ERR_INVALID;
    *num_sources = 1;
    return MPI_SUCCESS;
}

static int source_get_info(int source_index, char *name, int *name_len, char *desc, int *desc_len,
                           MPI_T_source_order *ordering, MPI_Count *ticks_per_second,
                           MPI_Count *max_ticks, MPI_Info *info)
{
    if (source_index != 0)
        return MPI_T_ERR_INVALID_INDEX;
    mpit_copy_string("process_clock", name, name_len);
    mpit_copy_string("Monotonic clock of this process (CLOCK_MONOTONIC), in nanoseconds", desc,
                     desc_len);
    if (ordering)
        *ordering = MPI_T_SOURCE_ORDERED;
    if (ticks_per_second)
        *ticks_per_second = 1000000000;
    if (max_ticks)
        *max_ticks = INT64_MAX;
    if (info) {
        /* An empty info object of the caller's, to free. */
        obj_info_t *i = obj_info_new();
        if (!i)
            return MPI_T_ERR_MEMORY;
        *info = obj_info_handle(i);
    }
    return MPI_SUCCESS;
}

static int source_get_timestamp(int source_index, MPI_Count *timestamp)
{
    if (source_index != 0)
        return MPI_T_ERR_INVALID_INDEX;
    if (!timestamp)
        return MPI_T_ERR_INVALID;
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    *timestamp = (MPI_Count)t.tv_sec * 1000000000 + t.tv_nsec;
    return MPI_SUCCESS;
}

int mpii_t_source_get_num(int *num_sources)
{
    MPIT_LOCKED(source_get_num(num_sources));
}

int mpii_t_source_get_info(int source_index, char *name, int *name_len, char *desc, int *desc_len,
                           MPI_T_source_order *ordering, MPI_Count *ticks_per_second,
                           MPI_Count *max_ticks, MPI_Info *info)
{
    MPIT_LOCKED(source_get_info(source_index, name, name_len, desc, desc_len, ordering,
                                ticks_per_second, max_ticks, info));
}

int mpii_t_source_get_timestamp(int source_index, MPI_Count *timestamp)
{
    MPIT_LOCKED(source_get_timestamp(source_index, timestamp));
}

/* ------------------------------------------------------------ event types */

static int event_get_num(int *num_events)
{
    if (!num_events)
        return MPI_T_ERR_INVALID;
    *num_events = 0;
    return MPI_SUCCESS;
}

static int event_get_index(const char *name, int *event_index)
{
    if (!name || !event_index)
        return MPI_T_ERR_INVALID;
    return MPI_T_ERR_INVALID_NAME;
}

int mpii_t_event_get_num(int *num_events)
{
    MPIT_LOCKED(event_get_num(num_events));
}

int mpii_t_event_get_index(const char *name, int *event_index)
{
    MPIT_LOCKED(event_get_index(name, event_index));
}

int mpii_t_event_get_info(int event_index, char *name, int *name_len, int *verbosity,
                          MPI_Datatype array_of_datatypes[], MPI_Aint array_of_displacements[],
                          int *num_elements, MPI_T_enum *enumtype, MPI_Info *info, char *desc,
                          int *desc_len, int *bind)
{
    (void)event_index, (void)name, (void)name_len, (void)verbosity, (void)array_of_datatypes;
    (void)array_of_displacements, (void)num_elements, (void)enumtype, (void)info, (void)desc;
    (void)desc_len, (void)bind;
    MPIT_LOCKED(MPI_T_ERR_INVALID_INDEX);
}

int mpii_t_event_handle_alloc(int event_index, void *obj_handle, MPI_Info info,
                              MPI_T_event_registration *event_registration)
{
    (void)event_index, (void)obj_handle, (void)info, (void)event_registration;
    MPIT_LOCKED(MPI_T_ERR_INVALID_INDEX);
}

/* ------------------------------------------------------------ registrations, instances */

int mpii_t_event_handle_free(MPI_T_event_registration event_registration, void *user_data,
                             MPI_T_event_free_cb_function free_cb_function)
{
    (void)event_registration, (void)user_data, (void)free_cb_function;
    MPIT_LOCKED(MPI_T_ERR_INVALID_HANDLE);
}

int mpii_t_event_handle_get_info(MPI_T_event_registration event_registration,
                                 MPI_Info *info_used)
{
    (void)event_registration, (void)info_used;
    MPIT_LOCKED(MPI_T_ERR_INVALID_HANDLE);
}

int mpii_t_event_handle_set_info(MPI_T_event_registration event_registration, MPI_Info info)
{
    (void)event_registration, (void)info;
    MPIT_LOCKED(MPI_T_ERR_INVALID_HANDLE);
}

int mpii_t_event_register_callback(MPI_T_event_registration event_registration,
                                   MPI_T_cb_safety cb_safety, MPI_Info info, void *user_data,
                                   MPI_T_event_cb_function event_cb_function)
{
    (void)event_registration, (void)cb_safety, (void)info, (void)user_data;
    (void)event_cb_function;
    MPIT_LOCKED(MPI_T_ERR_INVALID_HANDLE);
}

int mpii_t_event_callback_get_info(MPI_T_event_registration event_registration,
                                   MPI_T_cb_safety cb_safety, MPI_Info *info_used)
{
    (void)event_registration, (void)cb_safety, (void)info_used;
    MPIT_LOCKED(MPI_T_ERR_INVALID_HANDLE);
}

int mpii_t_event_callback_set_info(MPI_T_event_registration event_registration,
                                   MPI_T_cb_safety cb_safety, MPI_Info info)
{
    (void)event_registration, (void)cb_safety, (void)info;
    MPIT_LOCKED(MPI_T_ERR_INVALID_HANDLE);
}

int mpii_t_event_set_dropped_handler(MPI_T_event_registration event_registration,
                                     MPI_T_event_dropped_cb_function dropped_cb_function)
{
    (void)event_registration, (void)dropped_cb_function;
    MPIT_LOCKED(MPI_T_ERR_INVALID_HANDLE);
}

int mpii_t_event_read(MPI_T_event_instance event_instance, int element_index, void *buffer)
{
    (void)event_instance, (void)element_index, (void)buffer;
    MPIT_LOCKED(MPI_T_ERR_INVALID_HANDLE);
}

int mpii_t_event_copy(MPI_T_event_instance event_instance, void *buffer)
{
    (void)event_instance, (void)buffer;
    MPIT_LOCKED(MPI_T_ERR_INVALID_HANDLE);
}

int mpii_t_event_get_timestamp(MPI_T_event_instance event_instance, MPI_Count *event_timestamp)
{
    (void)event_instance, (void)event_timestamp;
    MPIT_LOCKED(MPI_T_ERR_INVALID_HANDLE);
}

int mpii_t_event_get_source(MPI_T_event_instance event_instance, int *source_index)
{
    (void)event_instance, (void)source_index;
    MPIT_LOCKED(MPI_T_ERR_INVALID_HANDLE);
}
