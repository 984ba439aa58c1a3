/*
 * test_tls: Check unit tests of shim/base/tls.c, the per-thread blocks that the tuner's and
 * discovery's memos and the launch counters live in, and of counters.c on top of it
 * (the one user that needs no driver): alignment and zeroing, the release at thread
 * exit, the list of every thread's block, and a failed allocation.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "counters.h"
#include "tls.h"

/* aligned_alloc, interposed for the whole test program (tls.c's calls come here): the
 * memory it returns is dirty, as an allocator's may be, so that a block that is not
 * zeroed shows; when fail_alloc is set, it fails as it does when memory runs out. */
static int fail_alloc;
void *aligned_alloc(size_t align, size_t size)
{
    void *p = NULL;
    if (fail_alloc) {
        errno = ENOMEM;
        return NULL;
    }
    if (posix_memalign(&p, align, size) != 0) return NULL;
    memset(p, 0xa5, size);
    return p;
}

/* A block of an awkward size: 96 bytes, 128 once rounded up to cache lines. */
typedef struct blk {
    unsigned char data[84];
    int index;
    struct blk *next;
} blk;

/* ---- a list without a release: blocks stay */

static xmt_tls_list plain = XMT_TLS_LIST(blk, next, NULL, NULL);

START_TEST(block_aligned_zeroed_listed)
{
    ck_assert_uint_eq(sizeof(blk), 96);
    for (int round = 0; round < 3; round++) {
        void *before = plain.head;
        unsigned char *b = xmt_tls_new(&plain);
        ck_assert_ptr_nonnull(b);
        ck_assert_uint_eq((uintptr_t)b % 64, 0);
        /* The whole of the rounded-up size is zero but the link to the block before. */
        for (size_t i = 0; i < 128; i++)
            if (i < offsetof(blk, next) || i >= offsetof(blk, next) + sizeof(blk *))
                ck_assert_uint_eq(b[i], 0);
        ck_assert_ptr_eq(((blk *)b)->next, before);
        ck_assert_ptr_eq(plain.head, b); /* the newest block first */
        memset(b, 0xa5, offsetof(blk, next));
    }
    int n = 0;
    for (blk *b = plain.head; b; b = b->next)
        n++;
    ck_assert_int_eq(n, 3);
    ck_assert_int_eq(plain.key_state, 0); /* no release, no key */
}
END_TEST

/* ---- a list with a release: the key's destructor runs at thread exit */

static void count_init(void *p);
static void count_release(void *p);
static xmt_tls_list counted = XMT_TLS_LIST(blk, next, count_init, count_release);

#define NTHREADS 4
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
static void *made[NTHREADS], *flushed[NTHREADS], *released[NTHREADS];
static pthread_t released_on[NTHREADS];
static int inits, nflushed, nreleased;
static pthread_barrier_t all_made, walked;

static void count_init(void *p)
{
    blk *b = p;
    b->index = -1; /* still zero: init sees a zeroed block */
    __atomic_fetch_add(&inits, 1, __ATOMIC_RELAXED);
}

static void count_flush(void *p)
{
    /* Under the list's lock, as a module's flush at exit runs. */
    ck_assert_int_ne(pthread_mutex_trylock(&counted.lock), 0);
    pthread_mutex_lock(&seen_lock);
    flushed[nflushed++] = p;
    pthread_mutex_unlock(&seen_lock);
}

static void count_release(void *p)
{
    xmt_tls_unlist(&counted, p, count_flush);
    pthread_mutex_lock(&seen_lock);
    released_on[nreleased] = pthread_self();
    released[nreleased++] = p;
    pthread_mutex_unlock(&seen_lock);
    free(p);
}

static void *thread_main(void *arg)
{
    int i = (int)(intptr_t)arg;
    blk *b = xmt_tls_new(&counted);
    ck_assert_ptr_nonnull(b);
    ck_assert_int_eq(b->index, -1); /* init ran before the block came back */
    b->index = i;
    made[i] = b;
    ck_assert_ptr_eq(pthread_getspecific(counted.key), b);
    pthread_barrier_wait(&all_made);
    pthread_barrier_wait(&walked); /* main has walked the list */
    return NULL;
}

static int index_of(void *const *v, int n, const void *p)
{
    for (int i = 0; i < n; i++)
        if (v[i] == p) return i;
    return -1;
}

START_TEST(blocks_of_every_thread_listed_and_released_at_exit)
{
    pthread_t t[NTHREADS];
    pthread_barrier_init(&all_made, NULL, NTHREADS + 1);
    pthread_barrier_init(&walked, NULL, NTHREADS + 1);
    for (int i = 0; i < NTHREADS; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, thread_main, (void *)(intptr_t)i), 0);
    pthread_barrier_wait(&all_made);

    /* The exit report's walk: every thread's block, each once. */
    int seen[NTHREADS] = {0}, n = 0;
    pthread_mutex_lock(&counted.lock);
    for (blk *b = counted.head; b; b = b->next, n++) {
        ck_assert_int_ge(b->index, 0);
        ck_assert_int_lt(b->index, NTHREADS);
        ck_assert_ptr_eq(made[b->index], b);
        seen[b->index]++;
    }
    pthread_mutex_unlock(&counted.lock);
    ck_assert_int_eq(n, NTHREADS);
    for (int i = 0; i < NTHREADS; i++)
        ck_assert_int_eq(seen[i], 1);
    ck_assert_int_eq(nreleased, 0); /* nothing released while the threads live */
    ck_assert_int_eq(inits, NTHREADS);

    pthread_barrier_wait(&walked);
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(t[i], NULL);

    /* Each thread's own block, released once on that thread, flushed first. */
    ck_assert_int_eq(nreleased, NTHREADS);
    ck_assert_int_eq(nflushed, NTHREADS);
    for (int i = 0; i < NTHREADS; i++) {
        int r = index_of(released, NTHREADS, made[i]);
        ck_assert_int_ge(r, 0);
        ck_assert(pthread_equal(released_on[r], t[i]));
        ck_assert_int_ge(index_of(flushed, NTHREADS, made[i]), 0);
    }
    ck_assert_ptr_null(counted.head); /* each took itself off the list */
}
END_TEST

/* Taking a block off the middle, the head and the tail of a list. */
START_TEST(unlist_anywhere)
{
    blk *b[3];
    for (int i = 0; i < 3; i++)
        ck_assert_ptr_nonnull(b[i] = xmt_tls_new(&plain)); /* head: b[2], b[1], b[0] */
    xmt_tls_unlist(&plain, b[1], NULL);
    ck_assert_ptr_eq(plain.head, b[2]);
    ck_assert_ptr_eq(b[2]->next, b[0]);
    xmt_tls_unlist(&plain, b[2], NULL);
    ck_assert_ptr_eq(plain.head, b[0]);
    xmt_tls_unlist(&plain, b[0], NULL);
    ck_assert_ptr_null(plain.head);
    xmt_tls_unlist(&plain, b[0], NULL); /* one not listed: nothing happens */
    ck_assert_ptr_null(plain.head);
    for (int i = 0; i < 3; i++)
        free(b[i]);
}
END_TEST

/* ---- a failed allocation */

static void *fail_thread(void *arg)
{
    (void)arg;
    fail_alloc = 1;
    void *b = xmt_tls_new(&counted);
    fail_alloc = 0;
    ck_assert_ptr_null(b);
    ck_assert_ptr_null(pthread_getspecific(counted.key)); /* nothing attached */
    return NULL;
}

START_TEST(failed_allocation_returns_null)
{
    fail_alloc = 1;
    ck_assert_ptr_null(xmt_tls_new(&plain));
    fail_alloc = 0;
    ck_assert_ptr_null(plain.head); /* nothing listed */

    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, fail_thread, NULL), 0);
    pthread_join(t, NULL);
    ck_assert_ptr_null(counted.head);
    ck_assert_int_eq(nreleased, 0); /* and nothing to release at its exit */
    ck_assert_int_eq(inits, 0);
}
END_TEST

/* counters.c, the caller without a release: when its block cannot be had, a thread
 * counts into the shared spare and the total still counts it. */
static void *count_thread(void *arg)
{
    int n = (int)(intptr_t)arg;
    for (int i = 0; i < n; i++)
        xmt_count_launch();
    return NULL;
}

START_TEST(counters_degrade_to_the_spare)
{
    pthread_t t;
    /* a thread with its own block, gone before the total is asked */
    ck_assert_int_eq(pthread_create(&t, NULL, count_thread, (void *)(intptr_t)5), 0);
    pthread_join(t, NULL);
    ck_assert_uint_eq(xmt_launches_total(), 5);
    /* this thread: no block */
    fail_alloc = 1;
    count_thread((void *)(intptr_t)3);
    fail_alloc = 0;
    ck_assert_uint_eq(xmt_launches_total(), 8);
    count_thread((void *)(intptr_t)2); /* it keeps the spare: asks no more */
    ck_assert_uint_eq(xmt_launches_total(), 10);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("tls");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, block_aligned_zeroed_listed);
    tcase_add_test(tc, blocks_of_every_thread_listed_and_released_at_exit);
    tcase_add_test(tc, unlist_anywhere);
    tcase_add_test(tc, failed_allocation_returns_null);
    tcase_add_test(tc, counters_degrade_to_the_spare);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
