/* libFuzzer harness: the launcher's job description (runtime/launch_job.c,
 * the byte buffers of launch_buf.c), as raild reads it from mpirun over the
 * network: launch_job_unpack must reject what is malformed, never read past
 * the message or allocate without bound. */
#include "runtime/launch.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    lbuf_t b;
    lbuf_init(&b);
    lbuf_put(&b, data, size);
    launch_job_t *job = launch_job_unpack(&b);
    if (job)
        launch_job_free(job);
    /* the same bytes as the other shapes messages carry */
    b.pos = 0;
    b.bad = false;
    char **v = lbuf_get_strv(&b);
    if (v)
        launch_strv_free(v);
    size_t n;
    b.pos = 0;
    b.bad = false;
    while (!b.bad && lbuf_get_bytes(&b, &n))
        ;
    lbuf_free(&b);
    return 0;
}
