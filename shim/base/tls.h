/*
 * tls: per-thread blocks that other threads can walk.
 *
 * A module that counts on the launch path keeps its counts in a block of the launching
 * thread's own, so that a launch writes no shared cache line, and reaches it through a
 * thread-local pointer of its own (the hot path's one check). At a thread's first launch
 * xmt_tls_new makes its block: 64-byte aligned and rounded up to whole cache lines (no
 * line shared with another thread's block), zeroed, attached to the list's pthread key
 * (whose destructor, the module's, adds up the block's counts and frees it at thread
 * exit) and put on the module's list under the list's lock, so that the exit report can
 * walk every thread's block (xmt_tls_each). The module keeps its thread-local pointer, its
 * other walks and its fork handling: they take list->lock and follow each block's own next member
 * from list->head.
 */
#ifndef XMT_TLS_H
#define XMT_TLS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

typedef struct xmt_tls_list {
    /* Guards head and every block's next; held by the module's walks and across fork (its
     * atfork handler). */
    pthread_mutex_t lock;
    void *head;      /* the newest block, then each block's own next member */
    size_t size;     /* bytes of a block, before rounding up to whole cache lines */
    size_t next_off; /* where in a block its next member is */
    /* Or NULL: readies a zeroed block (its own lock, say) after it is attached and before
     * it is listed, so that nothing has to undo it when attaching fails. */
    void (*init)(void *b);
    /* The key's destructor, run at thread exit with the thread's block. NULL: no key, and a
     * block stays listed and allocated for the life of the process (its counts outlive
     * its thread). */
    void (*release)(void *b);
    _Atomic int key_state; /* 0: no key yet, 1: made, -1: pthread_key_create failed */
    pthread_key_t key;
} xmt_tls_list;

/* A list of blocks of type TYPE, linked through its member NEXT (a TYPE *). */
#define XMT_TLS_LIST(TYPE, NEXT, INIT, RELEASE)                                                    \
    {                                                                                              \
        PTHREAD_MUTEX_INITIALIZER, NULL, sizeof(TYPE), offsetof(TYPE, NEXT), INIT, RELEASE, 0, 0   \
    }

/* The calling thread's new block, zeroed, attached to list's key (when it has a release)
 * and listed; free it with free(3). NULL, with nothing attached or listed, when it cannot
 * be allocated or attached: the caller goes on without one. Cold: the caller stores the
 * block in its thread-local pointer and never asks again. */
void *xmt_tls_new(xmt_tls_list *list);

/* Calls fn(b) for every listed block, under list->lock (a module's flush of every thread's
 * counts: at exit, before the report). */
void xmt_tls_each(xmt_tls_list *list, void (*fn)(void *b));

/* For a release: takes b off list, under list->lock, after flush(b) (when not NULL) has
 * added up its counts under the same lock. The caller then frees b. */
void xmt_tls_unlist(xmt_tls_list *list, void *b, void (*flush)(void *b));

#endif
