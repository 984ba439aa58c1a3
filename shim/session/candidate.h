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

/* A candidate's scalar arguments applied to a launch's (or graph node's) arguments, in
 * copies: params_out/extra_out are what to pass instead (the originals when c has no
 * overrides). Lives on the caller's stack; free with xmt_cand_args_free. */
typedef struct {
    void **params_out, **extra_out;
    void *params[XMT_KERNEL_MAX_PARAMS];
    uint64_t values[XMT_MAX_ARG_OVERRIDES];
    uint8_t packed_stack[4096];
    uint8_t *packed;
    size_t packed_size;
    void *extra[5];
} xmt_cand_args;

/* 0 and *a filled; -1 when the arguments cannot be found (an `extra` without a buffer,
 * too many parameters). */
int xmt_candidate_args(const xmt_kernel *k, void **params, void **extra, const xmt_candidate *c,
                       xmt_cand_args *a);
void xmt_cand_args_free(xmt_cand_args *a);

/* Launches l with candidate c's dimensions and scalar arguments (c NULL: as made). */
CUresult xmt_launch_as(const xmt_kernel *k, const xmt_launch *l, const xmt_candidate *c);

/* The launch as the program made it, counted as passed through. */
CUresult xmt_pass(xmt_kernel *k, const xmt_launch *l);

/* Errors after which the context is still usable: the launch was refused, nothing ran. */
int xmt_refused(CUresult r);

/* Whether c launches exactly as l does: the same grid, block and dynamic shared memory,
 * no argument overridden. */
int xmt_candidate_is_own(const xmt_candidate *c, const xmt_launch *l);

/* The launch for real with candidate c: if the driver refuses it, the program's own
 * config runs instead (warned) and its result is what the program sees. */
CUresult xmt_run_for_real(xmt_kernel *k, const xmt_launch *l, const xmt_candidate *c);

#endif
