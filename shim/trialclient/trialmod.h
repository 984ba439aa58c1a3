/*
 * trialmod: what the trial helper needs of a kernel's module besides its memory: the
 * module's image (the kernel's own, or the library's that the runtime loaded it from), the
 * module globals the program asked for with their current values, and the memfd a request
 * or an image travels in.
 */
#ifndef XMT_TRIALMOD_H
#define XMT_TRIALMOD_H

#include <stddef.h>
#include <stdint.h>

#include "kernels.h"
#include "modload.h"
#include "trialreq.h"

/* The module globals of a session, as the request carries them (names and values
 * malloc'd: xmt_tr_globals_free). */
typedef struct {
    xmt_tr_global *g;
    uint64_t n;
} xmt_tr_globals;

/* The module globals the program asked for, of the kernel's image's owner: its module, or
 * its library and the library's module in this context, with their current values, into
 * *gs. 0, or -1 with why when they cannot be read or are too large (over 1 MiB in all). */
int xmt_tr_globals_of(const xmt_image *img, xmt_tr_globals *gs, char *why, size_t cap);
void xmt_tr_globals_free(xmt_tr_globals *gs);

/* The image of k's module (modload.c keeps it), or of the library whose module k's owner
 * is. 1 and *img, else 0. */
int xmt_trial_image_of(const xmt_kernel *k, xmt_image *img);

/* A memfd holding len bytes of data. -1 on failure. */
int xmt_memfd_of(const char *name, const void *data, size_t len);

#endif
