/* libFuzzer harness: the collective rules file (coll/tuned/tuned_rules.c,
 * its JSON reader tuned_json.c), as read from a file a user names with
 * coll_tuned_rules_file.  A file that parses is also matched against. */
#include "coll/tuned/tuned_impl.h"

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tuned_rules_t r;
    char err[256];
    if (tuned_rules_parse((const char *)data, size, &r, err, sizeof(err)) != MPI_SUCCESS)
        return 0;
    for (int op = 0; op < COLL_OP_COUNT; op += 2)
        for (int n = 1; n <= 64; n *= 4)
            (void)tuned_rules_match(&r, op, n, (size_t)n << 12);
    tuned_rules_free(&r);
    return 0;
}
