/*
 * Byte buffers and the launcher's messages.  Integers travel in network byte
 * order; strings and blobs as a u32 length and their bytes (a NULL string as
 * length 0xffffffff).
 */
#include "runtime/launch.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

void lbuf_init(lbuf_t *b)
{
    memset(b, 0, sizeof(*b));
}

void lbuf_free(lbuf_t *b)
{
    free(b->data);
    lbuf_init(b);
}

void lbuf_reset(lbuf_t *b)
{
    b->len = b->pos = 0;
    b->bad = false;
}

void lbuf_put(lbuf_t *b, const void *p, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n)
            cap *= 2;
        char *d = realloc(b->data, cap);
        if (!d) {
            launch_msg("out of memory (%zu bytes)", cap);
            abort();
        }
        b->data = d;
        b->cap = cap;
    }
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
}

void lbuf_put_u32(lbuf_t *b, uint32_t v)
{
    v = htonl(v);
    lbuf_put(b, &v, 4);
}

void lbuf_put_i32(lbuf_t *b, int32_t v)
{
    lbuf_put_u32(b, (uint32_t)v);
}

void lbuf_put_u64(lbuf_t *b, uint64_t v)
{
    lbuf_put_u32(b, (uint32_t)(v >> 32));
    lbuf_put_u32(b, (uint32_t)v);
}

void lbuf_put_bytes(lbuf_t *b, const void *p, size_t n)
{
    lbuf_put_u32(b, (uint32_t)n);
    lbuf_put(b, p, n);
}

void lbuf_put_str(lbuf_t *b, const char *s)
{
    if (!s) {
        lbuf_put_u32(b, UINT32_MAX);
        return;
    }
    lbuf_put_bytes(b, s, strlen(s));
}

void lbuf_put_strv(lbuf_t *b, char *const *v)
{
    int n = launch_strv_len(v);
    lbuf_put_u32(b, (uint32_t)n);
    for (int i = 0; i < n; i++)
        lbuf_put_str(b, v[i]);
}

static const void *lbuf_take(lbuf_t *b, size_t n)
{
    if (b->bad || b->len - b->pos < n) {
        b->bad = true;
        return NULL;
    }
    const void *p = b->data + b->pos;
    b->pos += n;
    return p;
}

uint32_t lbuf_get_u32(lbuf_t *b)
{
    uint32_t v;
    const void *p = lbuf_take(b, 4);
    if (!p)
        return 0;
    memcpy(&v, p, 4);
    return ntohl(v);
}

int32_t lbuf_get_i32(lbuf_t *b)
{
    return (int32_t)lbuf_get_u32(b);
}

uint64_t lbuf_get_u64(lbuf_t *b)
{
    uint64_t hi = lbuf_get_u32(b);
    return hi << 32 | lbuf_get_u32(b);
}

const void *lbuf_get_bytes(lbuf_t *b, size_t *n)
{
    uint32_t len = lbuf_get_u32(b);
    const void *p = lbuf_take(b, len);
    *n = p ? len : 0;
    return p;
}

char *lbuf_get_str(lbuf_t *b)
{
    uint32_t len = lbuf_get_u32(b);
    const char *p;
    char *s;

    if (len == UINT32_MAX || b->bad)
        return NULL;
    p = lbuf_take(b, len);
    if (!p)
        return NULL;
    s = launch_xmalloc((size_t)len + 1);
    memcpy(s, p, len);
    s[len] = '\0';
    return s;
}

char **lbuf_get_strv(lbuf_t *b)
{
    uint32_t n = lbuf_get_u32(b);
    char **v;

    if (b->bad || n > b->len - b->pos) /* each entry takes at least 4 bytes */
        return NULL;
    v = launch_xcalloc((size_t)n + 1, sizeof(char *));
    for (uint32_t i = 0; i < n; i++) {
        v[i] = lbuf_get_str(b);
        if (!v[i]) {
            launch_strv_free(v);
            b->bad = true;
            return NULL;
        }
    }
    return v;
}

void lmsg_start(lbuf_t *b, uint32_t type)
{
    lbuf_reset(b);
    lbuf_put_u32(b, 0);
    lbuf_put_u32(b, type);
}

void lmsg_finish(lbuf_t *b)
{
    uint32_t n = htonl((uint32_t)(b->len - 4));
    memcpy(b->data, &n, 4);
}

const char *lmsg_name(uint32_t type)
{
    static const char *const names[LMSG_MAX] = {
        [LMSG_AUTH_CHALLENGE] = "AUTH_CHALLENGE",
        [LMSG_AUTH_RESPONSE] = "AUTH_RESPONSE",
        [LMSG_AUTH_OK] = "AUTH_OK",
        [LMSG_JOB] = "JOB",
        [LMSG_NODE_UP] = "NODE_UP",
        [LMSG_NODE_ERROR] = "NODE_ERROR",
        [LMSG_RANK_STATE] = "RANK_STATE",
        [LMSG_OUTPUT] = "OUTPUT",
        [LMSG_ABORT] = "ABORT",
        [LMSG_FENCE_UP] = "FENCE_UP",
        [LMSG_FENCE_DOWN] = "FENCE_DOWN",
        [LMSG_DMODEX_REQ] = "DMODEX_REQ",
        [LMSG_DMODEX_SERVE] = "DMODEX_SERVE",
        [LMSG_DMODEX_DATA] = "DMODEX_DATA",
        [LMSG_DMODEX_RESP] = "DMODEX_RESP",
        [LMSG_SIGNAL] = "SIGNAL",
        [LMSG_KILL] = "KILL",
        [LMSG_STDIN] = "STDIN",
        [LMSG_STDIN_ACK] = "STDIN_ACK",
        [LMSG_NODE_DONE] = "NODE_DONE",
        [LMSG_EXIT] = "EXIT",
    };
    return type < LMSG_MAX && names[type] ? names[type] : "?";
}
