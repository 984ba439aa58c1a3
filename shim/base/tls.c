/*
 * tls: per-thread blocks that other threads can walk (see tls.h).
 */
#include "tls.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define LINE 64

/* A block's next member, read and written as bytes: it is a pointer to the module's own
 * block type, which a void * may not alias. */
static void *next_of(const xmt_tls_list *list, const void *b)
{
    void *n;
    memcpy(&n, (const char *)b + list->next_off, sizeof n);
    return n;
}

static void set_next(const xmt_tls_list *list, void *b, void *n)
{
    memcpy((char *)b + list->next_off, &n, sizeof n);
}

/* The list's key, made by the first thread that needs it (under the list's lock, so that
 * a fork meets it made or not, never half made). 0 when it cannot be. */
static int key_ready(xmt_tls_list *list)
{
    int s = atomic_load_explicit(&list->key_state, memory_order_acquire);
    if (s == 0) {
        pthread_mutex_lock(&list->lock);
        s = atomic_load_explicit(&list->key_state, memory_order_relaxed);
        if (s == 0) {
            s = pthread_key_create(&list->key, list->release) == 0 ? 1 : -1;
            atomic_store_explicit(&list->key_state, s, memory_order_release);
        }
        pthread_mutex_unlock(&list->lock);
    }
    return s == 1;
}

void *xmt_tls_new(xmt_tls_list *list)
{
    if (list->release && !key_ready(list)) return NULL;
    if (list->size > SIZE_MAX - (LINE - 1)) return NULL;
    size_t bytes = (list->size + LINE - 1) / LINE * LINE; /* no line shared */
    void *b = aligned_alloc(LINE, bytes);
    if (!b) return NULL;
    memset(b, 0, bytes);
    if (list->release && pthread_setspecific(list->key, b) != 0) {
        free(b);
        return NULL;
    }
    if (list->init) list->init(b);
    pthread_mutex_lock(&list->lock);
    set_next(list, b, list->head);
    list->head = b;
    pthread_mutex_unlock(&list->lock);
    return b;
}

void xmt_tls_each(xmt_tls_list *list, void (*fn)(void *b))
{
    pthread_mutex_lock(&list->lock);
    for (void *p = list->head; p; p = next_of(list, p))
        fn(p);
    pthread_mutex_unlock(&list->lock);
}

void xmt_tls_unlist(xmt_tls_list *list, void *b, void (*flush)(void *b))
{
    pthread_mutex_lock(&list->lock);
    if (flush) flush(b);
    if (list->head == b) {
        list->head = next_of(list, b);
    } else {
        for (void *p = list->head; p; p = next_of(list, p))
            if (next_of(list, p) == b) {
                set_next(list, p, next_of(list, b));
                break;
            }
    }
    pthread_mutex_unlock(&list->lock);
}
