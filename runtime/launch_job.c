/* The job description: built by mpirun, sent to every raild. */
#include "runtime/launch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void launch_job_free(launch_job_t *job)
{
    if (!job)
        return;
    for (int i = 0; job->apps && i < job->napps; i++) {
        launch_strv_free(job->apps[i].argv);
        launch_strv_free(job->apps[i].env);
    }
    for (int i = 0; job->nodes && i < job->nnodes; i++) {
        free(job->nodes[i].name);
        free(job->nodes[i].ranks);
    }
    free(job->apps);
    free(job->nodes);
    free(job->rank_node);
    free(job->rank_app);
    free(job->rank_local);
    launch_strv_free(job->env);
    launch_strv_free(job->unset_env);
    free(job->wdir);
    free(job);
}

void launch_job_pack(const launch_job_t *job, lbuf_t *b)
{
    lbuf_put_str(b, job->jobid);
    lbuf_put_str(b, job->nspace);
    lbuf_put_i32(b, job->size);
    lbuf_put_i32(b, job->universe);
    lbuf_put_i32(b, job->napps);
    for (int i = 0; i < job->napps; i++) {
        lbuf_put_i32(b, job->apps[i].nprocs);
        lbuf_put_strv(b, job->apps[i].argv);
        lbuf_put_strv(b, job->apps[i].env);
    }
    lbuf_put_i32(b, job->nnodes);
    for (int i = 0; i < job->nnodes; i++)
        lbuf_put_str(b, job->nodes[i].name);
    for (int r = 0; r < job->size; r++)
        lbuf_put_i32(b, job->rank_node[r]);
    lbuf_put_strv(b, job->env);
    lbuf_put_strv(b, job->unset_env);
    lbuf_put_str(b, job->wdir);
    lbuf_put_i32(b, job->bind);
    lbuf_put_i32(b, job->tag_output);
    lbuf_put_i32(b, job->verbose);
}

static bool launch_job_unpack_apps(launch_job_t *job, lbuf_t *b)
{
    int first = 0, napps = lbuf_get_i32(b);
    if (b->bad || napps <= 0 || napps > 100000)
        return false;
    /* napps only with the array: launch_job_free walks it */
    job->apps = launch_xcalloc((size_t)napps, sizeof(launch_app_t));
    job->napps = napps;
    for (int i = 0; i < job->napps; i++) {
        launch_app_t *a = &job->apps[i];
        a->nprocs = lbuf_get_i32(b);
        /* checked before the sum: the apps' sizes add up to the job's */
        if (b->bad || a->nprocs <= 0 || a->nprocs > job->size - first)
            return false;
        a->argv = lbuf_get_strv(b);
        a->env = lbuf_get_strv(b);
        a->first_rank = first;
        first += a->nprocs;
        if (b->bad || !a->argv || !a->argv[0])
            return false;
    }
    return first == job->size;
}

launch_job_t *launch_job_unpack(lbuf_t *b)
{
    launch_job_t *job = launch_xcalloc(1, sizeof(*job));
    char *s, **names = NULL;
    int *host_of = NULL, nnodes;

    s = lbuf_get_str(b);
    snprintf(job->jobid, sizeof(job->jobid), "%s", s ? s : "");
    free(s);
    s = lbuf_get_str(b);
    snprintf(job->nspace, sizeof(job->nspace), "%s", s ? s : "");
    free(s);
    job->size = lbuf_get_i32(b);
    job->universe = lbuf_get_i32(b);
    if (b->bad || job->size <= 0 || job->size > 10000000 || !launch_job_unpack_apps(job, b))
        goto fail;
    nnodes = lbuf_get_i32(b);
    if (b->bad || nnodes <= 0 || nnodes > job->size)
        goto fail;
    names = launch_xcalloc((size_t)nnodes + 1, sizeof(char *));
    for (int i = 0; i < nnodes; i++)
        if (!(names[i] = lbuf_get_str(b)))
            goto fail;
    host_of = launch_xcalloc((size_t)job->size, sizeof(int));
    for (int r = 0; r < job->size; r++)
        host_of[r] = lbuf_get_i32(b);
    job->env = lbuf_get_strv(b);
    job->unset_env = lbuf_get_strv(b);
    job->wdir = lbuf_get_str(b);
    job->bind = lbuf_get_i32(b);
    job->tag_output = lbuf_get_i32(b) != 0;
    job->verbose = lbuf_get_i32(b);
    if (b->bad || !job->env || !job->unset_env || !job->wdir ||
        launch_job_set_map(job, nnodes, names, host_of) != 0)
        goto fail;
    launch_strv_free(names);
    free(host_of);
    return job;
fail:
    launch_strv_free(names);
    free(host_of);
    launch_job_free(job);
    return NULL;
}

int launch_job_set_map(launch_job_t *job, int nhosts, char **names, const int *host_of)
{
    int *count = launch_xcalloc((size_t)nhosts, sizeof(int));
    int *node_of_host = launch_xcalloc((size_t)nhosts, sizeof(int));

    for (int r = 0; r < job->size; r++) {
        if (host_of[r] < 0 || host_of[r] >= nhosts) {
            free(count);
            free(node_of_host);
            return -1;
        }
        count[host_of[r]]++;
    }
    /* Nodes are the hosts that got ranks, in host order. */
    job->nnodes = 0;
    job->nodes = launch_xcalloc((size_t)nhosts, sizeof(launch_node_info_t));
    for (int h = 0; h < nhosts; h++) {
        node_of_host[h] = -1;
        if (!count[h])
            continue;
        launch_node_info_t *n = &job->nodes[job->nnodes];
        n->name = launch_xstrdup(names[h]);
        n->ranks = launch_xcalloc((size_t)count[h], sizeof(int));
        node_of_host[h] = job->nnodes++;
    }
    job->rank_node = launch_xcalloc((size_t)job->size, sizeof(int));
    job->rank_app = launch_xcalloc((size_t)job->size, sizeof(int));
    job->rank_local = launch_xcalloc((size_t)job->size, sizeof(int));
    for (int r = 0, app = 0; r < job->size; r++) {
        launch_node_info_t *n = &job->nodes[node_of_host[host_of[r]]];
        while (app + 1 < job->napps && r >= job->apps[app + 1].first_rank)
            app++;
        job->rank_node[r] = node_of_host[host_of[r]];
        job->rank_app[r] = app;
        job->rank_local[r] = n->nranks;
        n->ranks[n->nranks++] = r;
    }
    free(count);
    free(node_of_host);
    return 0;
}
