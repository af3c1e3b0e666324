/* Intrusive doubly linked lists: embed a rail_list_item_t in the element. */
#ifndef BASE_LIST_H
#define BASE_LIST_H

#include <stddef.h>
#include <stdbool.h>

typedef struct rail_list_item {
    struct rail_list_item *next, *prev;
} rail_list_item_t;

/* A list is a sentinel item; empty when it points at itself. */
typedef struct rail_list {
    rail_list_item_t head;
} rail_list_t;

#define RAIL_LIST_INIT(l) { { &(l).head, &(l).head } }
#define rail_container_of(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))

static inline void rail_list_init(rail_list_t *l) { l->head.next = l->head.prev = &l->head; }
static inline bool rail_list_empty(const rail_list_t *l) { return l->head.next == &l->head; }
static inline rail_list_item_t *rail_list_first(const rail_list_t *l)
{
    return l->head.next == &l->head ? NULL : l->head.next;
}
static inline rail_list_item_t *rail_list_last(const rail_list_t *l)
{
    return l->head.prev == &l->head ? NULL : l->head.prev;
}
static inline rail_list_item_t *rail_list_next(const rail_list_t *l, const rail_list_item_t *it)
{
    return it->next == &l->head ? NULL : it->next;
}

static inline void rail_list_insert_after(rail_list_item_t *pos, rail_list_item_t *it)
{
    it->prev = pos;
    it->next = pos->next;
    pos->next->prev = it;
    pos->next = it;
}
static inline void rail_list_append(rail_list_t *l, rail_list_item_t *it)
{
    rail_list_insert_after(l->head.prev, it);
}
static inline void rail_list_prepend(rail_list_t *l, rail_list_item_t *it)
{
    rail_list_insert_after(&l->head, it);
}
static inline void rail_list_remove(rail_list_item_t *it)
{
    it->prev->next = it->next;
    it->next->prev = it->prev;
    it->next = it->prev = it;
}
static inline rail_list_item_t *rail_list_pop_front(rail_list_t *l)
{
    rail_list_item_t *it = rail_list_first(l);
    if (it)
        rail_list_remove(it);
    return it;
}

/* for (it = first; it; it = next) that tolerates removing it. */
#define RAIL_LIST_FOREACH_SAFE(l, it, tmp)                                                         \
    for ((it) = (l)->head.next, (tmp) = (it)->next; (it) != &(l)->head;                           \
         (it) = (tmp), (tmp) = (it)->next)

#endif
