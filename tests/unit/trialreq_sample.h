/*
 * trialreq_sample: a trial request (common/trialreq.h) with every field set to a value
 * other than its zero, for the round-trip test (test_trialreq.c) and the decoder's fuzz
 * seeds (fuzz_trialreq.c). Its arrays are static: the value is the caller's to read, not
 * to free. Values are chosen to catch a codec that narrows (64-bit values with the high
 * bit set, a double that is not an integer, a parameter of 0 bytes beside full ones).
 */
#ifndef XMT_TRIALREQ_SAMPLE_H
#define XMT_TRIALREQ_SAMPLE_H

#include <string.h>

#include "trialreq.h"

static xmt_trialreq trialreq_sample(void)
{
    static const uint8_t p0[8] = {1, 2, 3, 4, 5, 6, 7, 0x88}, p1[4] = {0xde, 0xad, 0xbe, 0xef};
    static const uint8_t p2[2] = {0x10, 0x20},
                         p3[16] = {0xff, 0, 0xff, 0, 9, 9, 9, 9, 0, 1, 2, 3, 4, 5, 6, 7};
    static xmt_tr_bytes params[5];
    static xmt_tr_window windows[2];
    static xmt_tr_region regions[3];
    static xmt_tr_fault faulted[2];
    static const uint8_t g0[4] = {0x01, 0x00, 0x00, 0x80}, g1[3] = {0xaa, 0xbb, 0xcc};
    static xmt_tr_global globals[2];
    params[0] = (xmt_tr_bytes){p0, sizeof p0};
    params[1] = (xmt_tr_bytes){p1, sizeof p1};
    params[2] = (xmt_tr_bytes){p2, sizeof p2};
    params[3] = (xmt_tr_bytes){p3, sizeof p3};
    params[4] = (xmt_tr_bytes){NULL, 0}; /* a parameter too large to send */
    windows[0] = (xmt_tr_window){0x7f0000200000ull, 0x400000, 0};
    windows[1] = (xmt_tr_window){0x8000000000000000ull, 0x200000, 0x400000};
    regions[0] = (xmt_tr_region){0x7f0000200010ull, 4096};
    regions[1] = (xmt_tr_region){0x7f0000300000ull, 12};
    regions[2] = (xmt_tr_region){0x8000000000000100ull, 0xffffffffffull};
    faulted[0] = (xmt_tr_fault){3, "", ""};
    faulted[1] = (xmt_tr_fault){-1, "", ""};
    strcpy(faulted[0].why, "faulted in the trial helper: CUDA_ERROR_ILLEGAL_ADDRESS at run");
    strcpy(faulted[1].why, "ran past the watchdog \"\\\" in the trial helper");
    strcpy(faulted[0].key, "p1=1048576, rules=3"); /* at another key of the kernel */
    globals[0] = (xmt_tr_global){"taps", {g0, sizeof g0}};
    globals[1] = (xmt_tr_global){"ns::scale", {g1, sizeof g1}};
    xmt_trialreq q = {
        .kernel = "_Z5saxpyifPKfPf",
        .key = "x.shape=(65536,), x.dtype=f32",
        .record_data = "0123456789abcdef",
        .decided = "1 4 9",
        .entry_fp = 0xfedcba9876543210ull,
        .only_index = 42,
        .staging_ms = 1.25,
        .granularity = 2u << 20,
        .device = 3,
        .verify_only = 1,
        .from_cache = 1,
        .recheck = 1,
        .in_place_first = 1,
        .has_only = 1,
        .only = {.grid = {256, 2, 3},
                 .block = {128, 4, 1},
                 .shared = 1024,
                 .nargs = XMT_TR_MAX_ARGS,
                 .label = "BLOCK=128, ITEMS=4"},
        .launch = {.grid = {512, 7, 1},
                   .block = {64, 2, 2},
                   .shared = 48,
                   .max_dynamic_shared = 98304,
                   .carveout = 50,
                   .nparams = 5,
                   .params = params},
        .image = {.id = "0x55d0c0ffee00:123456", .njit = 3},
        .nwindows = 2,
        .windows = windows,
        .nregions = 3,
        .regions = regions,
        .nfaulted = 2,
        .faulted = faulted,
        .nglobals = 2,
        .globals = globals,
    };
    /* every argument slot, within the parameters' sizes (8, 4, 2 bytes) */
    for (uint32_t i = 0; i < XMT_TR_MAX_ARGS; i++)
        q.only.args[i] = (xmt_tr_arg){0xffffffff00000000ull + i, i % 3, i % 3 == 2 ? 2 : 4};
    q.image.jit[0] = (xmt_tr_jit){4, 0xffffffffffffffffull};
    q.image.jit[1] = (xmt_tr_jit){11, 3};
    q.image.jit[2] = (xmt_tr_jit){-1, 7};
    return q;
}

#endif
