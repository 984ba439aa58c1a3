/*
 * verify: the comparison rules, on host memory. The shim's GPU kernels
 * (gpucheck/kernels.cu) apply the very same rules on the device; this file is their
 * twin for the host fallback, for messages, and for unit tests (no CUDA here).
 *
 * Bitwise (integers, and floats without a tolerance): an element differs when any of its
 * bytes does, so -0.0 differs from 0.0 and NaNs differ by payload. Within a tolerance
 * (f16, bf16, f32, f64 widened to double exactly, denormals kept): NaN equals NaN only;
 * an infinity equals only the same infinity; otherwise |got - ref| <= atol + rtol * |ref|,
 * each operation rounded on its own (no fused multiply-add).
 */
#ifndef XMT_VERIFY_H
#define XMT_VERIFY_H

#include <stddef.h>
#include <stdint.h>

#include "xmt_policy.h"

/* How elements compare: bitwise, or within a tolerance as one of the float types. The
 * codes are the PTX kernels' too. */
enum { XMT_CMP_BITS = 0, XMT_CMP_F16 = 1, XMT_CMP_BF16 = 2, XMT_CMP_F32 = 3, XMT_CMP_F64 = 4 };

/* The comparison a buffer of dtype dt asks for: XMT_CMP_BITS unless it is a float type
 * with a tolerance. *es is the element size (1 for bytes). */
int xmt_verify_kind(xmt_dtype dt, double rtol, double atol, unsigned *es);

/* The tolerance rule for one pair of values. */
int xmt_verify_within(double ref, double got, double rtol, double atol);

/* Element i of a buffer of kind `kind` (not XMT_CMP_BITS), as a double. */
double xmt_verify_value(const uint8_t *p, uint64_t i, int kind);

/* Compares bytes/es elements. Returns how many differ; *first = the first's index
 * (UINT64_MAX when none). */
uint64_t xmt_verify_host(const uint8_t *ref, const uint8_t *got, size_t bytes, int kind,
                         unsigned es, double rtol, double atol, uint64_t *first);

/* The largest |value| among n elements of kind `kind` (not XMT_CMP_BITS) at p, NaNs and
 * infinities left out; 0 when none. The PTX twin is xmt_absmax. */
double xmt_verify_absmax_host(const uint8_t *p, uint64_t n, int kind);

/* Word i of the guard bytes' pseudo-random sequence from seed (slack.h): SplitMix64's
 * output after i + 1 steps, each word made on its own. The PTX twin is xmt_seq. */
uint64_t xmt_verify_seq_word(uint64_t seed, uint64_t i);

/* dst[i] = xmt_verify_seq_word(seed, i) for i < words: the sequence made on the host. */
void xmt_verify_seq_fill(uint64_t *dst, size_t words, uint64_t seed);

/* Which chunks of 1 << shift bytes differ between a and b: flags[c] set to 1 for each
 * (others untouched). Returns the number of differing 16-byte words; *first = the byte
 * offset of the first (UINT64_MAX when none). */
uint64_t xmt_verify_changed_host(const uint8_t *a, const uint8_t *b, size_t bytes, unsigned shift,
                                 uint8_t *flags, uint64_t *first);

/* Compares a candidate's copy of buffer b (got) with the reference (ref), b->bytes each.
 * Returns 0 when they agree, else the number of differing elements, with the first
 * described in why. */
size_t xmt_verify_compare(const xmt_buffer *b, const uint8_t *ref, const uint8_t *got, char *why,
                          size_t cap);

/* Describes a difference already counted: "out: 2 of 4 elements differ bitwise, the first
 * at element 1" ("bytes", "at byte" with es_bytes), with the two values when there is a
 * tolerance. where, when not NULL, says where the first is instead ("byte 8 from where out
 * points"): one unit per number, never a byte offset beside an element index. */
void xmt_verify_describe(const char *name, uint64_t n, uint64_t total, uint64_t first, int kind,
                         int es_bytes, double rtol, double atol, double got, double ref,
                         const char *where, char *why, size_t cap);

#endif
