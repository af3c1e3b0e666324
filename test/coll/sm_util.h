/*
 * Helpers of the sm and han tests: which shared-memory segments of coll sm
 * this process has mapped (from /proc/self/maps), so a test can tell that
 * sm really serves a communicator, that a segment appears at the first
 * collective and goes with MPI_Comm_free, and that its name is unlinked.
 * coll sm names segments /dev/shm/rail-<jobid>-csm-<creator's world
 * rank>-<n>.
 */
#ifndef TEST_COLL_SM_UTIL_H
#define TEST_COLL_SM_UTIL_H

#include <stdio.h>
#include <string.h>

typedef struct sm_maps {
    int segments;        /* distinct csm segments mapped */
    int linked;          /* ... whose name still exists (not "(deleted)") */
    int by_creator;      /* ... created by the world rank asked for (-1: any) */
} sm_maps_t;

static inline sm_maps_t sm_maps(int creator)
{
    sm_maps_t r = { 0, 0, 0 };
    char line[1024], last[512] = "", want[64];
    snprintf(want, sizeof(want), "-csm-%d-", creator);
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return r;
    while (fgets(line, sizeof(line), f)) {
        char *p = strstr(line, "/dev/shm/rail-");
        if (!p || !strstr(p, "-csm-"))
            continue;
        p[strcspn(p, "\n")] = '\0';
        if (strcmp(p, last) == 0)   /* one segment, several lines */
            continue;
        snprintf(last, sizeof(last), "%s", p);
        r.segments++;
        r.linked += strstr(p, "(deleted)") == NULL;
        r.by_creator += creator < 0 || strstr(p, want) != NULL;
    }
    fclose(f);
    return r;
}

#endif
