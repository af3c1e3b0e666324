/* Helpers shared by the accel unit tests (see accel_test.h). */
#include "config.h"
#include "test/accel/accel_test.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>
#include <sys/wait.h>

extern char **environ;

int test_run_self(const char *self, const char *mode, const char *const *env, const char *out)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        for (int i = 0; env != NULL && env[i] != NULL; i++)
            putenv((char *)env[i]);
        if (out != NULL) {
            int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (fd >= 0) {
                dup2(fd, 1);
                dup2(fd, 2);
                close(fd);
            }
        }
        execl(self, self, mode, (char *)NULL);
        _exit(126);
    }
    int status;
    if (waitpid(pid, &status, 0) != pid)
        return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
