#ifndef RAIL_BASE_FUTEX_H
#define RAIL_BASE_FUTEX_H
/* The futex system call on a shared (not FUTEX_PRIVATE) 32-bit word, for
 * the waits whose words live in segments shared between processes (btl
 * sm's sleeping word, coll sm's generation word, base/progress's
 * rail_progress_sleep_on).  op is FUTEX_WAIT (ts relative, NULL for no
 * timeout) or FUTEX_WAKE; returns as the system call does. */
#include <linux/futex.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static inline long rail_futex(uint32_t *addr, int op, uint32_t val, const struct timespec *ts)
{
    return syscall(SYS_futex, addr, op, val, ts, NULL, 0);
}

#endif
