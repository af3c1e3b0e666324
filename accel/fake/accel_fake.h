/*
 * accel fake: an emulated device.  Shared between the fake component's files.
 *
 * Each allocation is a memfd mapped twice: the user's view, PROT_NONE, inside
 * a reserved address window (so any host dereference faults), and a private
 * read-write view that only this component touches.
 */
#ifndef ACCEL_FAKE_ACCEL_FAKE_H
#define ACCEL_FAKE_ACCEL_FAKE_H

#include "accel/accel_internal.h"

#include <pthread.h>
#include <sys/types.h>

typedef struct fake_alloc {
    struct fake_alloc *next;    /* list sorted by user address */
    uintptr_t user;             /* the user's (PROT_NONE) view */
    size_t size;                /* bytes asked for */
    size_t maplen;              /* size rounded to pages: memfd and both views */
    char *priv;                 /* the component's read-write view */
    int fd;                     /* the memfd, kept open for IPC */
    bool imported;              /* mapped from a peer's IPC handle */
    uint64_t id;
    uint64_t dev, ino;          /* identity of the memfd, checked by IPC openers */
} fake_alloc_t;

typedef struct fake_state {
    int index;                  /* our component index */
    uintptr_t window;           /* reserved address window for user views */
    size_t window_size;
    fake_alloc_t *head;
    uint64_t next_id;
    pthread_mutex_t lock;
    size_t va_size;             /* parameter accel_fake_va_size */
    const char *ipc_how;        /* parameter accel_fake_ipc */
} fake_state_t;

extern fake_state_t accel_fake RAIL_HIDDEN;

/* Map fd (maplen bytes) as a new allocation and register it; takes the fd. */
int accel_fake_map(int fd, size_t size, size_t maplen, bool imported, fake_alloc_t **out);
/* Unregister and unmap an allocation. */
int accel_fake_unmap(fake_alloc_t *a);

int accel_fake_ipc_get(const void *ptr, const accel_range_t *r, accel_ipc_handle_t *h,
                       size_t *off);
int accel_fake_ipc_open(const accel_ipc_handle_t *h, void **base);
int accel_fake_ipc_close(void *base, const accel_range_t *r);

#endif
