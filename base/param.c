/* The parameter registry (see param.h). */
#include "base/rail.h"
#include "base/param.h"
#include "base/log.h"

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

extern char **environ;

typedef struct conf_entry {
    char *name;
    char *value;
    char *where;              /* "/path:line" */
    rail_param_source_t source;
} conf_entry_t;

static rail_param_t **params;
static int n_params, cap_params;
static conf_entry_t *conf;
static int n_conf, cap_conf;
static bool conf_loaded;
static pthread_mutex_t param_lock = PTHREAD_MUTEX_INITIALIZER;

/* ------------------------------------------------------------ parsing */

bool rail_param_parse_size(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (end == s || errno || s[0] == '-')
        return false;
    unsigned shift = 0;
    switch (tolower((unsigned char)*end)) {
    case 'k': shift = 10; end++; break;
    case 'm': shift = 20; end++; break;
    case 'g': shift = 30; end++; break;
    default: break;
    }
    if (shift && tolower((unsigned char)*end) == 'b')
        end++;
    if (*end != '\0' || (shift && v > (~0ULL >> shift)))
        return false;
    *out = (size_t)(v << shift);
    return true;
}

bool rail_param_parse_bool(const char *s, bool *out)
{
    static const char *yes[] = {"1", "true", "yes", "on", "y"};
    static const char *no[] = {"0", "false", "no", "off", "n"};
    for (size_t i = 0; i < RAIL_ARRAY_SIZE(yes); i++) {
        if (strcasecmp(s, yes[i]) == 0) {
            *out = true;
            return true;
        }
        if (strcasecmp(s, no[i]) == 0) {
            *out = false;
            return true;
        }
    }
    return false;
}

static bool parse_int(const char *s, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 0);
    if (end == s || *end != '\0' || errno || v < -2147483647L - 1 || v > 2147483647L)
        return false;
    *out = (int)v;
    return true;
}

static bool parse_double(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || errno)
        return false;
    *out = v;
    return true;
}

static bool choice_ok(const rail_param_t *p, const char *value)
{
    if (!p->choices)
        return true;
    size_t n = strlen(value);
    for (const char *c = p->choices; *c;) {
        const char *bar = strchr(c, '|');
        size_t len = bar ? (size_t)(bar - c) : strlen(c);
        if (len == n && strncmp(c, value, n) == 0)
            return true;
        if (!bar)
            break;
        c = bar + 1;
    }
    return false;
}

/* Store text into the parameter's variable; false when it does not parse. */
static bool store_value(rail_param_t *p, const char *value)
{
    switch (p->type) {
    case RAIL_PARAM_INT:
        return parse_int(value, (int *)p->storage);
    case RAIL_PARAM_BOOL:
        return rail_param_parse_bool(value, (bool *)p->storage);
    case RAIL_PARAM_SIZE:
        return rail_param_parse_size(value, (size_t *)p->storage);
    case RAIL_PARAM_DOUBLE:
        return parse_double(value, (double *)p->storage);
    case RAIL_PARAM_STRING: {
        if (!choice_ok(p, value))
            return false;
        /* Strings are never freed: a reader may still hold the old one. */
        char *copy = strdup(value);
        if (!copy)
            return false;
        *(const char **)p->storage = copy;
        return true;
    }
    }
    return false;
}

/* ------------------------------------------------------------ config files */

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return s;
}

static void conf_add(const char *name, const char *value, const char *where,
                     rail_param_source_t src)
{
    if (n_conf == cap_conf) {
        int ncap = cap_conf ? 2 * cap_conf : 32;
        conf_entry_t *nc = realloc(conf, (size_t)ncap * sizeof(*nc));
        if (!nc)
            return;
        conf = nc;
        cap_conf = ncap;
    }
    conf[n_conf++] = (conf_entry_t){strdup(name), strdup(value), strdup(where), src};
}

static void conf_load_file(const char *path, rail_param_source_t src)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    char line[4096];
    int lineno = 0;
    while (fgets(line, sizeof(line), f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char *s = trim(line);
        if (!*s)
            continue;
        char where[4200];
        snprintf(where, sizeof(where), "%s:%d", path, lineno);
        char *eq = strchr(s, '=');
        if (!eq) {
            rail_warn("%s: expected 'name = value', ignoring \"%s\"", where, s);
            continue;
        }
        *eq = '\0';
        char *name = trim(s), *value = trim(eq + 1);
        for (char *c = name; *c; c++)
            *c = (char)tolower((unsigned char)*c);
        if (strncmp(name, "rail_", 5) == 0)
            name += 5;
        conf_add(name, value, where, src);
    }
    fclose(f);
}

/* <sysconfdir>/rail-params.conf.  Where sysconfdir is <prefix>/etc and this
 * code sits in <prefix>/lib (libmpi) or <prefix>/bin (a tool), the prefix is
 * taken from this file's own place, so that a moved installation reads its
 * own config file; other layouts use the configured path. */
static const char param_sysconf_anchor;
static void param_sysconf_path(char *path, size_t len)
{
    size_t np = strlen(RAIL_PREFIX);
    char self[4096], *slash;
    Dl_info info;
    snprintf(path, len, "%s/rail-params.conf", RAIL_SYSCONFDIR);
    if (strncmp(RAIL_SYSCONFDIR, RAIL_PREFIX, np) != 0 || strcmp(RAIL_SYSCONFDIR + np, "/etc") != 0)
        return;
    if (!dladdr(&param_sysconf_anchor, &info) || !info.dli_fname || !realpath(info.dli_fname, self))
        return;
    if (!(slash = strrchr(self, '/')))
        return;
    *slash = '\0';
    slash = strrchr(self, '/');
    if (slash && (strcmp(slash, "/lib") == 0 || strcmp(slash, "/bin") == 0)) {
        static const char tail[] = "/etc/rail-params.conf";
        size_t n = (size_t)(slash - self);
        if (n + sizeof(tail) <= len) {
            memcpy(path, self, n);
            memcpy(path + n, tail, sizeof(tail));
        }
    }
}

static void conf_load(void)
{
    if (conf_loaded)
        return;
    conf_loaded = true;
    char path[4096];
    param_sysconf_path(path, sizeof(path));
    conf_load_file(path, RAIL_PARAM_SRC_SYSTEM_FILE);
    const char *home = getenv("HOME");
    if (home) {
        snprintf(path, sizeof(path), "%s/.rail/params.conf", home);
        conf_load_file(path, RAIL_PARAM_SRC_USER_FILE); /* later entries win */
    }
}

/* ------------------------------------------------------------ resolution */

static void env_name(const char *name, char *buf, size_t len)
{
    size_t i = 0, n = strlen("RAIL_");
    memcpy(buf, "RAIL_", n);
    for (i = 0; name[i] && n + i + 1 < len; i++)
        buf[n + i] = (char)toupper((unsigned char)name[i]);
    buf[n + i] = '\0';
}

static void set_origin(rail_param_t *p, rail_param_source_t src, const char *origin)
{
    free(p->origin);
    p->origin = strdup(origin);
    p->source = src;
}

/* Apply, in rising precedence, the config files then the environment. */
static void resolve(rail_param_t *p)
{
    conf_load();
    for (int i = 0; i < n_conf; i++) {
        if (strcmp(conf[i].name, p->name) != 0)
            continue;
        if (store_value(p, conf[i].value))
            set_origin(p, conf[i].source, conf[i].where);
        else
            rail_warn("%s: bad value \"%s\" for parameter %s (%s), ignored", conf[i].where,
                      conf[i].value, p->name, rail_param_type_name(p->type));
    }
    char ename[256];
    env_name(p->name, ename, sizeof(ename));
    const char *v = getenv(ename);
    if (v) {
        char origin[300];
        snprintf(origin, sizeof(origin), "environment (%s)", ename);
        if (store_value(p, v))
            set_origin(p, RAIL_PARAM_SRC_ENV, origin);
        else
            rail_warn("bad value \"%s\" in %s (%s expected%s%s), using %s", v, ename,
                      rail_param_type_name(p->type), p->choices ? ": " : "",
                      p->choices ? p->choices : "", p->default_str);
    }
}

static rail_param_t *find_locked(const char *name)
{
    for (int i = 0; i < n_params; i++)
        if (strcmp(params[i]->name, name) == 0)
            return params[i];
    return NULL;
}

/* defval points at the default in the variable's type; it is stored only
 * for a new parameter, so registering again keeps the resolved value. */
static int do_register(const char *name, rail_param_type_t type, const char *def_str,
                       const char *choices, const char *help, int level, void *storage,
                       size_t storage_size, const void *defval)
{
    pthread_mutex_lock(&param_lock);
    rail_param_t *p = find_locked(name);
    if (p) {
        /* Registered before: move to the new variable, keep the value. */
        if (p->storage != storage)
            memcpy(storage, p->storage, storage_size);
        p->storage = storage;
        pthread_mutex_unlock(&param_lock);
        return MPI_SUCCESS;
    }
    if (n_params == cap_params) {
        int ncap = cap_params ? 2 * cap_params : 64;
        rail_param_t **np = realloc(params, (size_t)ncap * sizeof(*np));
        if (!np) {
            pthread_mutex_unlock(&param_lock);
            return MPI_ERR_NO_MEM;
        }
        params = np;
        cap_params = ncap;
    }
    p = calloc(1, sizeof(*p));
    if (!p) {
        pthread_mutex_unlock(&param_lock);
        return MPI_ERR_NO_MEM;
    }
    memcpy(storage, defval, storage_size);
    *p = (rail_param_t){.name = strdup(name), .type = type, .help = help, .level = level,
                        .storage = storage, .default_str = strdup(def_str),
                        .source = RAIL_PARAM_SRC_DEFAULT, .origin = strdup("default"),
                        .choices = choices};
    params[n_params++] = p;
    resolve(p);
    pthread_mutex_unlock(&param_lock);
    return MPI_SUCCESS;
}

int rail_param_set_flags(const char *name, unsigned flags)
{
    pthread_mutex_lock(&param_lock);
    rail_param_t *p = find_locked(name);
    if (p)
        p->flags |= flags;
    pthread_mutex_unlock(&param_lock);
    return p ? MPI_SUCCESS : MPI_ERR_ARG;
}

int rail_param_register_int(const char *name, int def, const char *help, int level, int *storage)
{
    char buf[32];
    snprintf(buf, sizeof(buf), "%d", def);
    return do_register(name, RAIL_PARAM_INT, buf, NULL, help, level, storage, sizeof(*storage), &def);
}

int rail_param_register_bool(const char *name, bool def, const char *help, int level, bool *storage)
{
    return do_register(name, RAIL_PARAM_BOOL, def ? "true" : "false", NULL, help, level, storage,
                       sizeof(*storage), &def);
}

int rail_param_register_size(const char *name, size_t def, const char *help, int level,
                             size_t *storage)
{
    char buf[32];
    snprintf(buf, sizeof(buf), "%zu", def);
    return do_register(name, RAIL_PARAM_SIZE, buf, NULL, help, level, storage, sizeof(*storage), &def);
}

int rail_param_register_double(const char *name, double def, const char *help, int level,
                               double *storage)
{
    char buf[64];
    snprintf(buf, sizeof(buf), "%g", def);
    return do_register(name, RAIL_PARAM_DOUBLE, buf, NULL, help, level, storage,
                       sizeof(*storage), &def);
}

int rail_param_register_string(const char *name, const char *def, const char *choices,
                               const char *help, int level, const char **storage)
{
    return do_register(name, RAIL_PARAM_STRING, def ? def : "", choices, help, level, storage,
                       sizeof(*storage), &def);
}

int rail_param_set(const char *name, const char *value, rail_param_source_t source)
{
    pthread_mutex_lock(&param_lock);
    rail_param_t *p = find_locked(name);
    int rc = MPI_ERR_ARG;
    if (p && store_value(p, value)) {
        set_origin(p, source, source == RAIL_PARAM_SRC_API ? "MPI_T" : "set");
        rc = MPI_SUCCESS;
    }
    pthread_mutex_unlock(&param_lock);
    return rc;
}

int rail_param_count(void)
{
    return n_params;
}

const rail_param_t *rail_param_at(int index)
{
    return index >= 0 && index < n_params ? params[index] : NULL;
}

const rail_param_t *rail_param_find(const char *name)
{
    pthread_mutex_lock(&param_lock);
    rail_param_t *p = find_locked(name);
    pthread_mutex_unlock(&param_lock);
    return p;
}

int rail_param_index(const char *name)
{
    int index = -1;
    pthread_mutex_lock(&param_lock);
    for (int i = 0; i < n_params && index < 0; i++)
        if (strcmp(params[i]->name, name) == 0)
            index = i;
    pthread_mutex_unlock(&param_lock);
    return index;
}

void rail_param_value_string(const rail_param_t *p, char *buf, size_t len)
{
    switch (p->type) {
    case RAIL_PARAM_INT: snprintf(buf, len, "%d", *(int *)p->storage); break;
    case RAIL_PARAM_BOOL: snprintf(buf, len, "%s", *(bool *)p->storage ? "true" : "false"); break;
    case RAIL_PARAM_SIZE: snprintf(buf, len, "%zu", *(size_t *)p->storage); break;
    case RAIL_PARAM_DOUBLE: snprintf(buf, len, "%g", *(double *)p->storage); break;
    case RAIL_PARAM_STRING: {
        const char *s = *(const char **)p->storage;
        snprintf(buf, len, "%s", s ? s : "");
        break;
    }
    }
}

const char *rail_param_type_name(rail_param_type_t t)
{
    static const char *names[] = {"int", "bool", "size", "double", "string"};
    return (unsigned)t < RAIL_ARRAY_SIZE(names) ? names[t] : "?";
}

/* ------------------------------------------------------------ unknown names */

/* Closest registered name, to suggest on a typo (smallest edit distance). */
static int edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64)
        return 99;
    int d[65][65];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = (int)i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = (int)j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            int sub = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            int del = d[i - 1][j] + 1, ins = d[i][j - 1] + 1;
            d[i][j] = RAIL_MIN(sub, RAIL_MIN(del, ins));
        }
    return d[la][lb];
}

static void warn_unknown(const char *name, const char *where)
{
    const char *best = NULL;
    int best_d = 4;
    for (int i = 0; i < n_params; i++) {
        int d = edit_distance(name, params[i]->name);
        if (d < best_d) {
            best_d = d;
            best = params[i]->name;
        }
    }
    if (best)
        rail_warn("%s: unknown parameter '%s' (did you mean '%s'?); see 'railinfo --all'", where,
                  name, best);
    else
        rail_warn("%s: unknown parameter '%s'; see 'railinfo --all'", where, name);
}

void rail_param_check_unknown(void)
{
    pthread_mutex_lock(&param_lock);
    conf_load();
    for (char **e = environ; e && *e; e++) {
        if (strncmp(*e, "RAIL_", 5) != 0)
            continue;
        const char *eq = strchr(*e, '=');
        size_t n = eq ? (size_t)(eq - *e) - 5 : strlen(*e + 5);
        char name[256];
        if (n == 0 || n >= sizeof(name))
            continue;
        for (size_t i = 0; i < n; i++)
            name[i] = (char)tolower((unsigned char)(*e)[5 + i]);
        name[n] = '\0';
        if (!find_locked(name)) {
            char where[300];
            snprintf(where, sizeof(where), "environment variable RAIL_%.*s", (int)n, *e + 5);
            warn_unknown(name, where);
        }
    }
    for (int i = 0; i < n_conf; i++)
        if (!find_locked(conf[i].name))
            warn_unknown(conf[i].name, conf[i].where);
    pthread_mutex_unlock(&param_lock);
}
