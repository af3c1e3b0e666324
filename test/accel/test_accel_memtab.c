/*
 * The memory-type table on its own: insert, find (inside, at the edges,
 * outside), removal, overlapping inserts dropping stale entries, growth past
 * the first array, and lock-free readers racing with a writer.
 */
#include "config.h"
#include "accel/accel_internal.h"
#include "test/accel/accel_test.h"

#include <pthread.h>
#include <stdatomic.h>

static accel_range_t range(uintptr_t base, size_t size, uint64_t id)
{
    return (accel_range_t){ .base = base, .size = size, .id = id, .device = 0,
                            .type = ACCEL_MEM_DEVICE, .component = 1 };
}

static void test_basic(void)
{
    accel_range_t r, out;
    CHECK(!accel_memtab_find(0x1000, &out));
    r = range(0x10000, 0x1000, 1);
    CHECK_OK(accel_memtab_insert(&r));
    r = range(0x30000, 0x100, 2);
    CHECK_OK(accel_memtab_insert(&r));
    r = range(0x20000, 0x2000, 3);
    CHECK_OK(accel_memtab_insert(&r));
    CHECK(accel_memtab_find(0x10000, &out) && out.id == 1);
    CHECK(accel_memtab_find(0x10fff, &out) && out.id == 1);
    CHECK(!accel_memtab_find(0x11000, &out));
    CHECK(!accel_memtab_find(0xffff, &out));
    CHECK(accel_memtab_find(0x21234, &out) && out.id == 3 && out.base == 0x20000);
    CHECK(accel_memtab_find(0x300ff, &out) && out.id == 2);
    CHECK(!accel_memtab_find(0x30100, &out));
    /* An overlapping insert replaces what it covers (a stale cached range). */
    r = range(0x20800, 0x10000, 4);
    CHECK_OK(accel_memtab_insert(&r));
    CHECK(!accel_memtab_find(0x20000, &out));
    CHECK(accel_memtab_find(0x300ff, &out) && out.id == 4);
    CHECK(accel_memtab_find(0x10000, &out) && out.id == 1);
    CHECK(!accel_memtab_remove(0x20801, NULL));
    CHECK(accel_memtab_remove(0x20800, &out) && out.id == 4);
    CHECK(!accel_memtab_find(0x20800, &out));
    CHECK(accel_memtab_remove(0x10000, NULL));
    CHECK(!accel_memtab_find(0x10000, &out));
}

static void test_growth(void)
{
    accel_range_t r, out;
    for (uintptr_t i = 0; i < 1000; i++) {
        r = range(0x100000 + i * 0x2000, 0x1000, 100 + i);  /* out of order below */
        r.base = 0x100000 + ((i * 7919) % 1000) * 0x2000;
        r.id = 100 + (i * 7919) % 1000;
        CHECK_OK(accel_memtab_insert(&r));
    }
    for (uintptr_t i = 0; i < 1000; i++) {
        CHECK(accel_memtab_find(0x100000 + i * 0x2000 + 0x800, &out) && out.id == 100 + i);
        CHECK(!accel_memtab_find(0x100000 + i * 0x2000 + 0x1000, &out));
    }
    accel_memtab_remove_component(1);
    CHECK(!accel_memtab_find(0x100800, &out));
}

/* Readers must always see either the old or the new state, never garbage. */
static atomic_int stop;

static void *reader(void *arg)
{
    accel_range_t out;
    long bad = 0;
    while (!atomic_load(&stop)) {
        /* 0x500000 is always present; 0x600000 comes and goes. */
        if (!accel_memtab_find(0x500010, &out) || out.id != 7 || out.base != 0x500000)
            bad++;
        if (accel_memtab_find(0x600010, &out) && (out.base != 0x600000 || out.id != 8))
            bad++;
        if (accel_memtab_find(0x400000, &out))
            bad++;
    }
    return (void *)bad;
}

static void test_concurrent(void)
{
    accel_range_t r = range(0x500000, 0x100, 7);
    pthread_t t[2];
    CHECK_OK(accel_memtab_insert(&r));
    for (int i = 0; i < 2; i++)
        CHECK(pthread_create(&t[i], NULL, reader, NULL) == 0);
    for (int i = 0; i < 20000; i++) {
        r = range(0x600000, 0x100, 8);
        CHECK_OK(accel_memtab_insert(&r));
        for (int k = 0; k < 3; k++) {  /* churn that grows and shifts the array */
            accel_range_t x = range(0x700000 + (uintptr_t)((i * 3 + k) % 300) * 0x1000, 0x10, 9);
            CHECK_OK(accel_memtab_insert(&x));
        }
        CHECK(accel_memtab_remove(0x600000, NULL));
        if (i % 100 == 99)
            for (int k = 0; k < 300; k++)
                accel_memtab_remove(0x700000 + (uintptr_t)k * 0x1000, NULL);
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < 2; i++) {
        void *bad;
        pthread_join(t[i], &bad);
        CHECK(bad == NULL);
    }
}

int main(void)
{
    test_basic();
    test_growth();
    test_concurrent();
    accel_memtab_fini();
    printf("memtab: ok\n");
    return 0;
}
