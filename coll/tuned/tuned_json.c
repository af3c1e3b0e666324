/* coll tuned: a small JSON reader (see tuned_json.h). */
#include "coll/tuned/tuned_json.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TJ_MAX_DEPTH 64

typedef struct tj_parser {
    const char *s, *end;
    int line, col;
    char *err;
    size_t errlen;
    bool failed;
} tj_parser_t;

static int fail(tj_parser_t *p, const char *fmt, ...)
{
    if (!p->failed) {
        int n = snprintf(p->err, p->errlen, "line %d, column %d: ", p->line, p->col);
        va_list ap;
        va_start(ap, fmt);
        if (n >= 0 && (size_t)n < p->errlen)
            vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
        va_end(ap);
        p->failed = true;
    }
    return -1;
}

static int peek(const tj_parser_t *p)
{
    return p->s < p->end ? (unsigned char)*p->s : -1;
}

static void advance(tj_parser_t *p)
{
    if (*p->s == '\n') {
        p->line++;
        p->col = 1;
    } else {
        p->col++;
    }
    p->s++;
}

static void skip_ws(tj_parser_t *p)
{
    while (p->s < p->end && (*p->s == ' ' || *p->s == '\t' || *p->s == '\n' || *p->s == '\r'))
        advance(p);
}

static int expect_word(tj_parser_t *p, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(p->end - p->s) < n || strncmp(p->s, w, n) != 0)
        return fail(p, "unexpected characters (expected a value)");
    for (size_t i = 0; i < n; i++)
        advance(p);
    return 0;
}

/* ------------------------------------------------------------ strings */

static void put_utf8(char *out, size_t *n, uint32_t cp)
{
    if (cp < 0x80) {
        out[(*n)++] = (char)cp;
    } else if (cp < 0x800) {
        out[(*n)++] = (char)(0xc0 | (cp >> 6));
        out[(*n)++] = (char)(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        out[(*n)++] = (char)(0xe0 | (cp >> 12));
        out[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[(*n)++] = (char)(0x80 | (cp & 0x3f));
    } else {
        out[(*n)++] = (char)(0xf0 | (cp >> 18));
        out[(*n)++] = (char)(0x80 | ((cp >> 12) & 0x3f));
        out[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[(*n)++] = (char)(0x80 | (cp & 0x3f));
    }
}

static int hex4(tj_parser_t *p, uint32_t *v)
{
    *v = 0;
    for (int i = 0; i < 4; i++) {
        int ch = peek(p);
        int d = ch >= '0' && ch <= '9'   ? ch - '0'
                : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
                : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10
                                         : -1;
        if (d < 0)
            return fail(p, "bad \\u escape");
        *v = *v * 16 + (uint32_t)d;
        advance(p);
    }
    return 0;
}

static int escape(tj_parser_t *p, char *out, size_t *n)
{
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    int ch = peek(p);
    const char *k = ch > 0 ? strchr(from, ch) : NULL;
    if (k && *k) {
        out[(*n)++] = to[k - from];
        advance(p);
        return 0;
    }
    if (ch != 'u')
        return fail(p, "bad escape in a string");
    advance(p);
    uint32_t cp, lo;
    if (hex4(p, &cp))
        return -1;
    if (cp >= 0xd800 && cp < 0xdc00) {   /* surrogate pair */
        if (peek(p) != '\\')
            return fail(p, "lone surrogate in a \\u escape");
        advance(p);
        if (peek(p) != 'u')
            return fail(p, "lone surrogate in a \\u escape");
        advance(p);
        if (hex4(p, &lo) || lo < 0xdc00 || lo >= 0xe000)
            return fail(p, "bad surrogate pair in a \\u escape");
        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
    }
    put_utf8(out, n, cp);
    return 0;
}

/* A string starting at '"'; *out gets a new NUL-terminated copy. */
static int parse_string(tj_parser_t *p, char **out)
{
    advance(p);   /* the quote */
    /* decoded text is never longer than the source */
    const char *q = p->s;
    while (q < p->end && *q != '"')
        q += *q == '\\' && q + 1 < p->end ? 2 : 1;
    char *buf = malloc((size_t)(q - p->s) + 4);
    size_t n = 0;
    if (!buf)
        return fail(p, "out of memory");
    for (;;) {
        int ch = peek(p);
        if (ch < 0) {
            free(buf);
            return fail(p, "unterminated string");
        }
        if (ch == '"') {
            advance(p);
            break;
        }
        if (ch < 0x20) {
            free(buf);
            return fail(p, "control character in a string");
        }
        if (ch == '\\') {
            advance(p);
            if (escape(p, buf, &n)) {
                free(buf);
                return -1;
            }
            continue;
        }
        buf[n++] = (char)ch;
        advance(p);
    }
    buf[n] = '\0';
    *out = buf;
    return 0;
}

/* ------------------------------------------------------------ values */

static int parse_value(tj_parser_t *p, tj_value_t *v, int depth);

static int parse_number(tj_parser_t *p, tj_value_t *v)
{
    const char *start = p->s;
    if (peek(p) == '-')
        advance(p);
    if (peek(p) == '0') {
        advance(p);
    } else if (peek(p) >= '1' && peek(p) <= '9') {
        while (peek(p) >= '0' && peek(p) <= '9')
            advance(p);
    } else {
        return fail(p, "bad number");
    }
    if (peek(p) == '.') {
        advance(p);
        if (!(peek(p) >= '0' && peek(p) <= '9'))
            return fail(p, "bad number: digits expected after '.'");
        while (peek(p) >= '0' && peek(p) <= '9')
            advance(p);
    }
    if (peek(p) == 'e' || peek(p) == 'E') {
        advance(p);
        if (peek(p) == '+' || peek(p) == '-')
            advance(p);
        if (!(peek(p) >= '0' && peek(p) <= '9'))
            return fail(p, "bad number: digits expected in the exponent");
        while (peek(p) >= '0' && peek(p) <= '9')
            advance(p);
    }
    char tmp[64];
    size_t n = (size_t)(p->s - start);
    if (n >= sizeof(tmp))
        return fail(p, "number too long");
    memcpy(tmp, start, n);
    tmp[n] = '\0';
    v->type = TJ_NUMBER;
    v->num = strtod(tmp, NULL);
    return 0;
}

/* Grow an array of items (and keys). */
static int push_item(tj_parser_t *p, tj_value_t *v, int *cap, char *key)
{
    if (v->n == *cap) {
        int nc = *cap ? *cap * 2 : 4;
        tj_value_t *items = realloc(v->items, (size_t)nc * sizeof(*items));
        if (!items)
            return fail(p, "out of memory");
        v->items = items;
        if (v->type == TJ_OBJECT) {
            char **keys = realloc(v->keys, (size_t)nc * sizeof(*keys));
            if (!keys)
                return fail(p, "out of memory");
            v->keys = keys;
        }
        *cap = nc;
    }
    memset(&v->items[v->n], 0, sizeof(v->items[0]));
    if (v->type == TJ_OBJECT)
        v->keys[v->n] = key;
    v->n++;
    return 0;
}

/* Array or object body after the opening bracket. */
static int parse_container(tj_parser_t *p, tj_value_t *v, int depth)
{
    bool obj = v->type == TJ_OBJECT;
    char close = obj ? '}' : ']';
    int cap = 0;
    advance(p);
    skip_ws(p);
    if (peek(p) == close) {
        advance(p);
        return 0;
    }
    for (;;) {
        char *key = NULL;
        skip_ws(p);
        if (obj) {
            if (peek(p) != '"')
                return fail(p, "a member name (string) expected");
            if (parse_string(p, &key))
                return -1;
            skip_ws(p);
            if (peek(p) != ':') {
                free(key);
                return fail(p, "':' expected after a member name");
            }
            advance(p);
        }
        if (push_item(p, v, &cap, key)) {
            free(key);
            return -1;
        }
        if (parse_value(p, &v->items[v->n - 1], depth + 1))
            return -1;
        skip_ws(p);
        if (peek(p) == ',') {
            advance(p);
            continue;
        }
        if (peek(p) == close) {
            advance(p);
            return 0;
        }
        return fail(p, "',' or '%c' expected", close);
    }
}

static int parse_value(tj_parser_t *p, tj_value_t *v, int depth)
{
    skip_ws(p);
    memset(v, 0, sizeof(*v));
    v->line = p->line;
    v->col = p->col;
    if (depth > TJ_MAX_DEPTH)
        return fail(p, "nested too deeply");
    switch (peek(p)) {
    case '{':
        v->type = TJ_OBJECT;
        return parse_container(p, v, depth);
    case '[':
        v->type = TJ_ARRAY;
        return parse_container(p, v, depth);
    case '"':
        v->type = TJ_STRING;
        return parse_string(p, &v->str);
    case 't':
        v->type = TJ_BOOL;
        v->b = true;
        return expect_word(p, "true");
    case 'f':
        v->type = TJ_BOOL;
        return expect_word(p, "false");
    case 'n':
        return expect_word(p, "null");
    case -1:
        return fail(p, "unexpected end of text");
    default:
        return parse_number(p, v);
    }
}

int tj_parse(const char *text, size_t len, tj_value_t *out, char *err, size_t errlen)
{
    tj_parser_t p = { text, text + len, 1, 1, err, errlen, false };
    if (errlen)
        err[0] = '\0';
    int rc = parse_value(&p, out, 0);
    if (rc == 0) {
        skip_ws(&p);
        if (p.s != p.end)
            rc = fail(&p, "unexpected text after the value");
    }
    if (rc != 0) {
        tj_free(out);
        return -1;
    }
    return 0;
}

void tj_free(tj_value_t *v)
{
    for (int i = 0; i < v->n; i++) {
        tj_free(&v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->str);
    memset(v, 0, sizeof(*v));
}

const tj_value_t *tj_get(const tj_value_t *obj, const char *key)
{
    if (obj->type != TJ_OBJECT)
        return NULL;
    for (int i = 0; i < obj->n; i++)
        if (strcmp(obj->keys[i], key) == 0)
            return &obj->items[i];
    return NULL;
}

const char *tj_type_name(tj_type_t t)
{
    static const char *const names[] = { "null", "boolean", "number", "string", "array",
                                         "object" };
    return names[t];
}
