/*
 * rounding: float outputs under `protect: auto`, and telling float rounding from a wrong
 * result (docs/tuning.md, Rounding).
 *
 * Auto protection compares everything a launch's pointers reach bitwise. A candidate
 * that adds in another order (another block size in a reduction, float atomics) differs
 * from the program's own config in the last bits of its float outputs, and nowhere else.
 * Here: the extents of those outputs (the memory a pointer to a float type writes), given
 * to the comparisons apart so that a difference is known to lie in one; the measurement
 * of such a difference (is every element within a rounding bound, and what is the
 * largest relative difference), made with the comparison kernels themselves (a count
 * per tolerance, bisected) against the output's largest magnitude (gpucheck's
 * xmt_gc_absmax) so that no output is copied to the host; and the entry's
 * tolerance (`tolerance:`, or XMATUNE_AUTO_TOLERANCE through auto's derived entries), the
 * only thing that lets such a candidate pass.
 */
#ifndef XMT_ROUNDING_H
#define XMT_ROUNDING_H

#include <stddef.h>
#include <stdint.h>

#include "gpucheck.h"
#include "kernels.h"
#include "outputs.h"
#include "protect.h"
#include "xmt_policy.h"

/* What a rounding rejection's message ends with, without a tolerance: what would allow
 * one where the user is, the entry's one-line tolerance: for a policy's entry,
 * XMATUNE_AUTO_TOLERANCE for the entries auto derives (which no one writes). Static. */
const char *xmt_rounding_hint(const xmt_entry *e);

/* Most float extents per launch (a kernel with more float pointers: the first ones). */
#define XMT_MAX_EXTENTS 32

/* Room for each extent's name ("p3", "y"). */
#define XMT_EXTENT_NAME 40

/* The difference under which a float element differs by rounding alone, relative to the
 * largest magnitude in its output: 2^-10 for f32 and f64 (about 1e-3), 2^-6 for f16 and
 * bf16 (16 and 2 units in their last place). Relative to the output's scale rather than
 * to each element, since a sum that cancels can round far from its own small value:
 * far above what another summation order gives, far below a wrong element. */
double xmt_rounding_bound(int cmp_kind);

/* The float outputs of a launch: for each pointer argument to a float type (the entry's
 * tensors: or typed pointer, else the kernel's demangled signature) that points at an
 * output chunk of a region, the extent from where it points to the end of that run of
 * output chunks, or to the next pointer argument above it in the region if that comes
 * first, in whole elements; none that overlaps a declared buffer or another extent.
 * Written into out (roles XMT_BUF_VERIFY | XMT_SBUF_EXTENT, dtype, ptr, bytes, rtol and
 * atol as given; name: names[i]), at most cap. Returns how many. */
size_t xmt_rounding_extents(const xmt_kernel *k, const xmt_launch_view *v, const xmt_region *regs,
                            size_t nregs, const xmt_sbuf *declared, size_t ndeclared, double rtol,
                            double atol, xmt_sbuf *out, char (*names)[XMT_EXTENT_NAME], size_t cap);

/* What a difference in one float extent is. */
typedef struct {
    uint64_t elements; /* elements whose values differ (-0.0 and 0.0 do not); counted only
                          where rounding is 1 or first was not beyond it */
    int rounding;      /* 1: every difference within xmt_rounding_bound() times scale */
    double max_rel;    /* rounding: every difference within this times scale; found within
                          9% of the largest (0 when no value differs) */
} xmt_rounding;

/* Measures how extent comparison c (ref, got, bytes, es of a float kind cmp_kind), whose
 * reference has the largest magnitude scale, differs: a few comparisons on the GPU (or
 * the host path) at chosen tolerances. first: the index of an element known to differ
 * bitwise (UINT64_MAX: none known); when it differs beyond the rounding bound, that is
 * the answer, read from its two values alone (out->elements is then 0: not counted). */
CUresult xmt_rounding_measure(xmt_gc *gc, const xmt_gc_cmp *c, int cmp_kind, double scale,
                              uint64_t first, xmt_rounding *out);

#endif
