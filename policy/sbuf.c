/* sbuf.c - a bounded text buffer (see sbuf.h). */
#include "sbuf.h"

#include <stdarg.h>
#include <stdio.h>

void xmt_sb(xmt_sbuf *b, const char *fmt, ...)
{
    if (b->at >= b->cap) return;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(b->buf + b->at, b->cap - b->at, fmt, ap);
    va_end(ap);
    if (w > 0) b->at = (b->at + (size_t)w < b->cap) ? b->at + (size_t)w : b->cap - 1;
}
