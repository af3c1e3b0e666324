/*
 * coll tuned: a small JSON reader for the rules file (RFC 8259 values:
 * objects, arrays, strings with escapes, numbers, true, false, null).
 * Strings are decoded to UTF-8 (\uXXXX escapes included); numbers are
 * doubles.  Errors name the line and column.  No dependency.
 */
#ifndef COLL_TUNED_TUNED_JSON_H
#define COLL_TUNED_TUNED_JSON_H

#include <stdbool.h>
#include <stddef.h>

typedef enum tj_type { TJ_NULL, TJ_BOOL, TJ_NUMBER, TJ_STRING, TJ_ARRAY, TJ_OBJECT } tj_type_t;

typedef struct tj_value {
    tj_type_t type;
    int line, col;               /* where it starts, for messages */
    bool b;
    double num;
    char *str;                   /* TJ_STRING, NUL-terminated */
    int n;                       /* TJ_ARRAY, TJ_OBJECT: number of items */
    struct tj_value *items;
    char **keys;                 /* TJ_OBJECT: key of each item */
} tj_value_t;

/* Parse text[0, len) (one value, surrounded by white space only).  0 on
 * success; -1 with "line L, column C: what" in err. */
int tj_parse(const char *text, size_t len, tj_value_t *out, char *err, size_t errlen);
void tj_free(tj_value_t *v);
/* Member `key` of an object, or NULL. */
const tj_value_t *tj_get(const tj_value_t *obj, const char *key);
const char *tj_type_name(tj_type_t t);

#endif
