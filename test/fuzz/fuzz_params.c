/* libFuzzer harness: the parameter files (rail-params.conf, ~/.rail/
 * params.conf) and the value parsers every source of a parameter goes
 * through (base/param.c, included here to reach its file reader).  The
 * input is a file's contents; each entry is then applied to parameters of
 * every type, as MPI_Init applies a file's entries. */
#include "base/param.c"

#include <stdint.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int v_int;
static bool v_bool;
static size_t v_size;
static double v_double;
static const char *v_choice, *v_text;

static void register_once(void)
{
    static bool done;
    if (done)
        return;
    done = true;
    rail_param_register_int("fz_int", 1, "an int", RAIL_PARAM_LEVEL_USER, &v_int);
    rail_param_register_bool("fz_bool", false, "a bool", RAIL_PARAM_LEVEL_USER, &v_bool);
    rail_param_register_size("fz_size", 4096, "a size", RAIL_PARAM_LEVEL_USER, &v_size);
    rail_param_register_double("fz_double", 0.5, "a double", RAIL_PARAM_LEVEL_USER, &v_double);
    rail_param_register_string("fz_choice", "a", "a|bb|ccc", "a choice", RAIL_PARAM_LEVEL_USER,
                               &v_choice);
    rail_param_register_string("fz_text", "", NULL, "text", RAIL_PARAM_LEVEL_USER, &v_text);
}

/* Set name to value.  The registry never frees a string value (a reader
 * may still hold the old one): the harness frees the new ones itself, so
 * that the leak detector sees only the parser's own allocations. */
static void set_one(const char *name, const char *value)
{
    const char *choice = v_choice, *text = v_text;
    (void)rail_param_set(name, value, RAIL_PARAM_SRC_USER_FILE);
    if (v_choice != choice) {
        free((char *)v_choice);
        v_choice = choice;
    }
    if (v_text != text) {
        free((char *)v_text);
        v_text = text;
    }
}

static void conf_clear(void)
{
    for (int i = 0; i < n_conf; i++) {
        free(conf[i].name);
        free(conf[i].value);
        free(conf[i].where);
    }
    n_conf = 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const names[] = {"fz_int", "fz_bool", "fz_size", "fz_double",
                                        "fz_choice", "fz_text"};
    register_once();
    char path[] = "/tmp/rail-fuzz-params-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return 0;
    ssize_t w = write(fd, data, size);
    close(fd);
    if (w == (ssize_t)size)
        conf_load_file(path, RAIL_PARAM_SRC_USER_FILE);
    unlink(path);
    for (int i = 0; i < n_conf; i++) {
        set_one(conf[i].name, conf[i].value);
        for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
            set_one(names[k], conf[i].value);
    }
    conf_clear();
    return 0;
}
