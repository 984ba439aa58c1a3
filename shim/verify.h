/*
 * verify: does a candidate's output agree with the program's own? Bitwise for integers
 * and for floats without tolerance, else element by element within rtol/atol (NaN
 * equals NaN). No CUDA: unit-tested on host buffers (tests/unit).
 */
#ifndef XMT_VERIFY_H
#define XMT_VERIFY_H

#include <stddef.h>
#include <stdint.h>

#include "xmt_policy.h"

/* Compares a candidate's copy of buffer b (got) with the reference (ref), b->bytes each.
 * Returns 0 when they agree, else the number of differing elements (at least 1), with
 * the first described in why. */
size_t xmt_verify_compare(const xmt_buffer *b, const uint8_t *ref, const uint8_t *got, char *why,
                          size_t cap);

#endif
