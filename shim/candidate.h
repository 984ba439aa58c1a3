/*
 * candidate: launching a kernel with a candidate's configuration — its grid, block,
 * shared memory and scalar arguments — without ever writing the program's argument
 * memory (overrides go into copies), and the rules for a refused launch.
 */
#ifndef XMT_CANDIDATE_H
#define XMT_CANDIDATE_H

#include <cuda.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels.h"
#include "launch.h"
#include "xmt_policy.h"

/* The packed argument buffer of an `extra` array and its size; -1 when it has none. */
int xmt_extra_buffer(void **extra, uint8_t **buf, size_t *size);

/* Launches l with candidate c's dimensions and scalar arguments (c NULL: as made). */
CUresult xmt_launch_as(const xmt_kernel *k, const xmt_launch *l, const xmt_candidate *c);

/* The launch as the program made it, counted as passed through. */
CUresult xmt_pass(xmt_kernel *k, const xmt_launch *l);

/* Errors after which the context is still usable: the launch was refused, nothing ran. */
int xmt_refused(CUresult r);

/* The launch for real with candidate c: if the driver refuses it, the program's own
 * config runs instead (warned) and its result is what the program sees. */
CUresult xmt_run_for_real(xmt_kernel *k, const xmt_launch *l, const xmt_candidate *c);

#endif
