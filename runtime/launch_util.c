/* Small helpers shared by mpirun and raild. */
#include "runtime/launch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *launch_progname = "mpirun";
int launch_verbose;

static void launch_vmsg(const char *fmt, va_list ap)
{
    char line[4096];
    int n = snprintf(line, sizeof(line), "%s: ", launch_progname);
    vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
    size_t len = strlen(line);
    line[len++] = '\n';
    /* One write, so the line never mixes with rank output. */
    ssize_t rc = write(2, line, len);
    (void)rc;
}

void launch_msg(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    launch_vmsg(fmt, ap);
    va_end(ap);
}

void launch_debug(const char *fmt, ...)
{
    va_list ap;
    if (!launch_verbose)
        return;
    va_start(ap, fmt);
    launch_vmsg(fmt, ap);
    va_end(ap);
}

void *launch_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        launch_msg("out of memory (%zu bytes)", n);
        abort();
    }
    return p;
}

void *launch_xcalloc(size_t n, size_t m)
{
    void *p = calloc(n ? n : 1, m ? m : 1);
    if (!p) {
        launch_msg("out of memory");
        abort();
    }
    return p;
}

char *launch_xstrdup(const char *s)
{
    char *d = strdup(s ? s : "");
    if (!d) {
        launch_msg("out of memory");
        abort();
    }
    return d;
}

const char *launch_signame(int sig)
{
    const char *s = strsignal(sig);
    return s ? s : "unknown signal";
}

void launch_rmtree(const char *path)
{
    DIR *d = opendir(path);
    struct dirent *e;

    if (d) {
        while ((e = readdir(d))) {
            char sub[PATH_MAX];
            struct stat st;
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
            if (lstat(sub, &st) == 0 && S_ISDIR(st.st_mode))
                launch_rmtree(sub);
            else
                unlink(sub);
        }
        closedir(d);
    }
    rmdir(path);
}

int launch_shm_cleanup(const char *jobid)
{
    char prefix[128];
    DIR *d;
    struct dirent *e;
    int n = 0;

    if (!jobid || !*jobid)
        return 0;
    snprintf(prefix, sizeof(prefix), "rail-%s-", jobid);
    d = opendir("/dev/shm");
    if (!d)
        return 0;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) {
            char path[PATH_MAX];
            struct stat st;
            snprintf(path, sizeof(path), "/dev/shm/%s", e->d_name);
            if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
                launch_rmtree(path);
            else
                unlink(path);
            n++;
        }
    }
    closedir(d);
    return n;
}

int launch_strv_len(char *const *v)
{
    int n = 0;
    while (v && v[n])
        n++;
    return n;
}

void launch_strv_free(char **v)
{
    for (int i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

void launch_strv_append(char ***v, const char *s)
{
    int n = launch_strv_len(*v);
    char **nv = realloc(*v, sizeof(char *) * (size_t)(n + 2));
    if (!nv) {
        launch_msg("out of memory");
        abort();
    }
    nv[n] = launch_xstrdup(s);
    nv[n + 1] = NULL;
    *v = nv;
}

char **launch_env_copy(char **env)
{
    int n = launch_strv_len(env);
    char **v = launch_xcalloc((size_t)n + 1, sizeof(char *));
    for (int i = 0; i < n; i++)
        v[i] = launch_xstrdup(env[i]);
    return v;
}

static int launch_env_find(char **env, const char *name, size_t len)
{
    for (int i = 0; env && env[i]; i++)
        if (strncmp(env[i], name, len) == 0 && env[i][len] == '=')
            return i;
    return -1;
}

void launch_env_set(char ***env, const char *name_value)
{
    const char *eq = strchr(name_value, '=');
    size_t len = eq ? (size_t)(eq - name_value) : strlen(name_value);
    int i = launch_env_find(*env, name_value, len);

    if (i >= 0) {
        free((*env)[i]);
        (*env)[i] = launch_xstrdup(name_value);
    } else {
        launch_strv_append(env, name_value);
    }
}

void launch_env_unset(char **env, const char *name)
{
    int i = launch_env_find(env, name, strlen(name));
    if (i < 0)
        return;
    free(env[i]);
    for (; env[i]; i++)
        env[i] = env[i + 1];
}

const char *launch_env_get(char **env, const char *name)
{
    int i = launch_env_find(env, name, strlen(name));
    return i >= 0 ? env[i] + strlen(name) + 1 : NULL;
}

static bool launch_is_exe(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

char *launch_find_exe(const char *name, const char *path, const char *wdir)
{
    char buf[PATH_MAX];

    if (strchr(name, '/')) {
        if (name[0] != '/' && wdir)
            snprintf(buf, sizeof(buf), "%s/%s", wdir, name);
        else
            snprintf(buf, sizeof(buf), "%s", name);
        errno = 0;
        if (launch_is_exe(buf))
            return launch_xstrdup(buf);
        if (errno == 0)
            errno = EACCES;
        return NULL;
    }
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    for (const char *p = path; *p;) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == 0)
            snprintf(buf, sizeof(buf), "%s/%s", wdir ? wdir : ".", name);
        else if (p[0] != '/' && wdir)
            snprintf(buf, sizeof(buf), "%s/%.*s/%s", wdir, (int)len, p, name);
        else
            snprintf(buf, sizeof(buf), "%.*s/%s", (int)len, p, name);
        if (launch_is_exe(buf))
            return launch_xstrdup(buf);
        p += len;
        if (*p == ':')
            p++;
    }
    errno = ENOENT;
    return NULL;
}

void launch_set_cloexec(int fd)
{
    int f = fcntl(fd, F_GETFD);
    if (f >= 0)
        fcntl(fd, F_SETFD, f | FD_CLOEXEC);
}

void launch_set_nonblock(int fd)
{
    int f = fcntl(fd, F_GETFL);
    if (f >= 0)
        fcntl(fd, F_SETFL, f | O_NONBLOCK);
}

bool launch_is_local_host(const char *name)
{
    char host[HOST_NAME_MAX + 1] = "";
    size_t n;

    if (strcmp(name, "localhost") == 0 || strcmp(name, "127.0.0.1") == 0)
        return true;
    if (gethostname(host, sizeof(host) - 1) != 0)
        return false;
    if (strcmp(name, host) == 0)
        return true;
    /* "node1" names "node1.example.org" and the other way round. */
    n = strcspn(host, ".");
    return strlen(name) == n ? strncmp(name, host, n) == 0
                             : (strncmp(name, host, n) == 0 && name[n] == '.' && !strchr(host, '.'));
}

void launch_fix_std_fds(void)
{
    /* A closed 0, 1 or 2 would be reused by our pipes and sockets. */
    for (int fd = 0; fd < 3; fd++) {
        if (fcntl(fd, F_GETFD) < 0) {
            int n = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
            if (n >= 0 && n != fd) {
                dup2(n, fd);
                close(n);
            }
        }
    }
}
