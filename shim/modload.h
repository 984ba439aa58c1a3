/*
 * modload: the module and library images the program loads.
 *
 * The load entry points (cuModuleLoad*, cuLibraryLoad*, cuLinkComplete; signatures.h's
 * pass-through rows) are wrapped so that the trial helper can be given the program's
 * module images. For now each call passes through unchanged and is counted by entry
 * point, so the log's `exit` event says which ones a program used.
 */
#ifndef XMT_MODLOAD_H
#define XMT_MODLOAD_H

#include <cuda.h>

/* One call of the load entry point `entry` returned r. Thread-safe; rare (a load). */
void xmt_modload_seen(const char *entry, CUresult r);

/* Calls fn(ud, entry, succeeded, failed) for each load entry point called at least once,
 * in the order first seen. */
void xmt_modload_each(void (*fn)(void *ud, const char *entry, unsigned long long ok,
                                 unsigned long long failed),
                      void *ud);

#endif
