/* Tests that need the kernel to refuse cross-memory attach (EPERM): a
 * process without CAP_SYS_PTRACE in its effective set may not read or
 * write one that is not dumpable (prctl(PR_SET_DUMPABLE, 0)). */
#ifndef TEST_PTRACE_CAP_H
#define TEST_PTRACE_CAP_H

#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Drop CAP_SYS_PTRACE from this process's effective set (where it has
 * it): 0, or -1 with errno. */
static inline int test_drop_cap_sys_ptrace(void)
{
    struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct d[2];
    if (syscall(SYS_capget, &h, d) != 0)
        return 0;
    d[CAP_SYS_PTRACE / 32].effective &= ~(1u << (CAP_SYS_PTRACE % 32));
    return (int)syscall(SYS_capset, &h, d);
}

#endif
