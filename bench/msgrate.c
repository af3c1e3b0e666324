/* Message rate: np/2 pairs stream windows of small messages at once; the
 * figure is messages per second summed over the pairs (see bw.c). */
#define BENCH_MSGRATE 1
#include "bw.c"
