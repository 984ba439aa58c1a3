/* sbuf.h - a bounded text buffer for the policy library's renderings (a key in words, a
 * candidate's label, an entry described): printf-style appends that stop at its end and
 * keep it a string (sbuf.c). */
#ifndef XMT_SBUF_H
#define XMT_SBUF_H

#include <stddef.h>

typedef struct {
    char *buf;
    size_t cap, at; /* at: the text's length, at most cap - 1 */
} xmt_sbuf;

/* Appends to b as printf would, cut at b's end (b->buf stays a string). */
void xmt_sb(xmt_sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
