/*
 * family: fault families (docs/tuning.md, "Fault families"). Once a candidate faults or
 * hangs in the trial helper, the candidates that reach further along the same idiom (more
 * threads per block, a larger grid, more threads in an axis, more dynamic shared memory, in
 * each dimension in which the faulting one grew past the program's own config) are
 * skipped without running: a kernel without a bounds check then costs a few faults, not
 * one per candidate. Pure rules on launch shapes and labels; no CUDA
 * (tests/unit/test_family.c).
 */
#ifndef XMT_FAMILY_H
#define XMT_FAMILY_H

#include <stddef.h>

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

#endif
