/*
 * family: fault families (docs/tuning.md, "Fault families"). Once a candidate faults or
 * hangs in the trial helper, the candidates that reach further along the same idiom (more
 * threads per block, a larger grid, more threads in an axis, more dynamic shared memory, in
 * each dimension in which the faulting one grew past the program's own config) are
 * skipped without running: a kernel without a bounds check then costs a few faults, not
 * one per candidate. What one key's session learned carries to the kernel's other keys in
 * the process (xmt_family_learn, xmt_family_learned): a program of stages (a wavefront's
 * diagonals, a sort's steps) launches such a kernel at a key per stage, and each key would
 * otherwise fault again where the first did. Pure rules on launch shapes and labels, and a
 * lock-free table; no CUDA (tests/unit/test_family.c).
 */
#ifndef XMT_FAMILY_H
#define XMT_FAMILY_H

#include <stddef.h>
#include <stdint.h>

#include "xmt_policy.h"

/* Whether candidate c reaches at least as far as f, which faulted, in every dimension in
 * which f grew past the program's own config own. The dimensions: grid and block in x, y
 * and z, threads in each axis (grid times block: how far blockIdx * blockDim + threadIdx
 * goes, which a kernel without a bounds check takes for its index) and dynamic shared
 * memory; f grew in one where its value is larger than own's, and c reaches as far there
 * when its value is at least f's. A faulted config that grew in no dimension condemns
 * nothing (0). 1 with the dimensions in why ("block.x 128 >= 64, threads in x 4194304 >=
 * 2097152"), else 0. */
int xmt_family_reaches(const xmt_dims *own, const xmt_dims *f, const xmt_dims *c, char *why,
                       size_t cap);

/* The group candidate i (its label) belongs to, within which families are drawn: for an
 * entry XMATUNE_AUTO derived (derived 1), its launch idiom (the label's IDIOM=n: 2 + n);
 * else the entry's `configs:` list (0, i < space_first) or its `space:` (1). */
int xmt_family_group(int derived, const char *label, size_t i, size_t space_first);

/* ---- faults carried across a kernel's keys ------------------------------------------------ */

#define XMT_FAMILY_KEPT 32   /* faults kept per kernel */
#define XMT_FAMILY_SLOTS 256 /* and in all, per process */
#define XMT_FAMILY_TEXT 160  /* a fault's why and key, NUL included */

/* A candidate that faulted or hung at one of a kernel's keys. */
typedef struct {
    long index;                /* the entry's candidate index */
    char why[XMT_FAMILY_TEXT]; /* what happened ("faulted in the trial helper: ...") */
    char key[XMT_FAMILY_TEXT]; /* the key it happened at, as messages render it */
} xmt_family_fault;

/* Candidate index of the kernel id (a hash of what its cache records are kept under: its
 * name, its entry's fingerprint, its code's) faulted or hung at key: kept for the kernel's
 * other keys in this process. Once per (id, index); past XMT_FAMILY_KEPT for a kernel or
 * XMT_FAMILY_SLOTS in all, nothing more is kept. Lock-free (claimed slots, published with
 * a release store): any thread may call it, and a fork leaves no lock held. */
void xmt_family_learn(uint64_t id, long index, const char *why, const char *key);

/* The faults kept for kernel id at keys other than key (the session's own are its own),
 * in the order learned, into out (at most cap). Returns how many. */
size_t xmt_family_learned(uint64_t id, const char *key, xmt_family_fault *out, size_t cap);

/* Tests: forget every fault kept. */
void xmt_family_forget(void);

#endif
