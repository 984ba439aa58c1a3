/*
 * trialreq: the trial request, the one value the shim hands its trial helper for a tuning
 * or verification session (issue 47, item 3).
 *
 * A TUNE message (common/trialproto.h) carries three descriptors; the first is a memfd
 * holding this request: which kernel (its mangled name, the fingerprint of the policy
 * entry the program tuned it with), the key, what the session is to do (tune, verify
 * only, verify one cached or pinned config), the launch as the program made it (dims,
 * shared memory, the function's attributes, every parameter's bytes), the module image's
 * identity and JIT options, the staged memory's layout (windows, the regions in them, the
 * allocation granularity they were rounded to), the candidates that faulted in an earlier
 * helper, the module globals' values, and the program's staging time.
 *
 * The value is the C struct below; on the wire it is one JSON object (jansson) whose
 * field names live only in trialreq.c, written and read by one walk over the struct, so
 * that a field cannot be written without being read. The object carries the protocol's
 * version (XMT_TP_VERSION, "v"): a request of another version, with a field missing, of
 * the wrong type or out of range, or with a field this side does not know, is refused
 * with a sentence saying which.
 *
 * Which side owns what (each rule computed once): the shim finds the staged regions,
 * rounds them to the allocation granularity it asks the driver for, and sends both; the
 * helper only maps what it is told (its guard is that granularity). Whether a config's
 * arguments fit the kernel's parameters is xmt_tr_args_check, asked by the shim before it
 * stages anything and by the decoder.
 *
 * The encoder is in the shim (xmtcommon: no JSON loader, which the shim must never link);
 * the decoder's entry point, which parses text, is trialreq_load.c (xmtcommon_tools, linked
 * by the helper and the tests only). tests/unit/test_trialreq.c round-trips every field;
 * tests/unit/fuzz_trialreq.c fuzzes the decoder.
 */
#ifndef XMT_TRIALREQ_H
#define XMT_TRIALREQ_H

#include <stddef.h>
#include <stdint.h>

#include "trialproto.h"

#define XMT_TR_MAX_ARGS 8          /* arguments a config sets (XMT_MAX_ARG_OVERRIDES) */
#define XMT_TR_MAX_PARAMS 256      /* kernel parameters (XMT_KERNEL_MAX_PARAMS) */
#define XMT_TR_MAX_PARAM_BYTES 256 /* a parameter's bytes sent (a larger one goes empty) */
#define XMT_TR_MAX_JIT 16          /* JIT options of the module's load (xmt_image's) */
#define XMT_TR_MAX_WINDOWS 256     /* windows of staged memory */
#define XMT_TR_MAX_FAULTED 256     /* candidates that faulted in earlier helpers */
#define XMT_TR_MAX_GLOBALS 64      /* module globals */
#define XMT_TR_WHY 160             /* a faulted candidate's why, NUL included */
#define XMT_TR_IMAGE_ID 40         /* an image's id, NUL included */

/* Every struct here has no padding (tests/unit/test_trialreq.c checks it), so that the
 * round-trip test can compare whole values byte for byte. */

typedef struct {
    uint32_t x, y, z;
} xmt_tr_dim3;

/* A scalar argument a config sets: the low `size` bytes of value, little-endian. */
typedef struct {
    uint64_t value;
    uint32_t param; /* the kernel parameter's index */
    uint32_t size;
} xmt_tr_arg;

/* A config (xmt_candidate's dims, arguments and label). */
typedef struct {
    xmt_tr_dim3 grid, block;
    uint32_t shared;
    uint32_t nargs;
    xmt_tr_arg args[XMT_TR_MAX_ARGS];
    char label[XMT_TP_LABEL];
} xmt_tr_candidate;

/* Bytes (a parameter's, a global's), as hex on the wire. */
typedef struct {
    const uint8_t *bytes;
    size_t len;
} xmt_tr_bytes;

/* The launch as the program made it. */
typedef struct {
    xmt_tr_dim3 grid, block;
    uint32_t shared;
    int32_t max_dynamic_shared; /* the function's opt-in, as the program set it */
    int32_t carveout;           /* its preferred carveout, -1 when not asked */
    uint32_t nparams;
    xmt_tr_bytes *params; /* each parameter's bytes (empty: more than XMT_TR_MAX_PARAM_BYTES) */
} xmt_tr_launch;

typedef struct {
    int64_t option; /* a CUjit_option */
    uint64_t value; /* its value, a number */
} xmt_tr_jit;

/* The module image's identity (the helper loads each once) and its load's JIT options. */
typedef struct {
    char id[XMT_TR_IMAGE_ID];
    uint64_t njit;
    xmt_tr_jit jit[XMT_TR_MAX_JIT];
} xmt_tr_image;

/* A window of staged memory: where the program has it, how long, where in the staging. */
typedef struct {
    uint64_t va, bytes, offset;
} xmt_tr_window;

/* A region the launch reaches, at the program's address (inside a window). */
typedef struct {
    uint64_t base, bytes;
} xmt_tr_region;

/* A candidate that faulted in an earlier helper: its index and what happened; key: "" at
 * this key, else the other key of the kernel where it faulted in this process (its fault
 * family carries here: docs/tuning.md, "Fault families"). */
typedef struct {
    int64_t index;
    char why[XMT_TR_WHY];
    char key[XMT_TR_WHY];
} xmt_tr_fault;

/* A module global the program set, by name, with its current value. */
typedef struct {
    const char *name;
    xmt_tr_bytes value;
} xmt_tr_global;

/* The request. Flags are 0 or 1. The strings and arrays are the caller's to encode; a
 * decoded request owns them (xmt_trialreq_free). */
typedef struct {
    const char *kernel;      /* the mangled name */
    const char *key;         /* the key's readable text */
    const char *record_data; /* the cached record's data digest, or NULL */
    /* a partial record's candidates decided not to win in an earlier run ("1 4 9"), or NULL:
     * skipped (docs/tuning.md, "Resuming a session cut at exit") */
    const char *decided;
    uint64_t entry_fp;      /* the policy entry's fingerprint as the program has it */
    int64_t only_index;     /* `only`'s candidate index (-1 when none) */
    double staging_ms;      /* what the program spent staging (regions, copies, globals) */
    uint64_t granularity;   /* the allocation granularity the windows are rounded to */
    int32_t device;         /* the program's device ordinal */
    int32_t verify_only;    /* verify, do not tune */
    int32_t from_cache;     /* `only` is a cached winner */
    int32_t recheck;        /* a re-check of a cached winner (its own event) */
    int32_t in_place_first; /* the in-place check runs before any candidate */
    int32_t has_only;       /* `only` is set: the one config to verify */
    xmt_tr_candidate only;
    xmt_tr_launch launch;
    xmt_tr_image image;
    uint64_t nwindows;
    xmt_tr_window *windows;
    uint64_t nregions;
    xmt_tr_region *regions;
    uint64_t nfaulted;
    xmt_tr_fault *faulted;
    uint64_t nglobals;
    xmt_tr_global *globals;
} xmt_trialreq;

/* q as the wire's text (JSON, NUL-terminated), malloc'd (*len its length without the NUL).
 * NULL when out of memory or q breaks a limit above (its why in err). */
char *xmt_trialreq_encode(const xmt_trialreq *q, size_t *len, char *err, size_t errcap);

/* Decodes len bytes of text into *q (zeroed first). 0, or -1 with why in err (a sentence,
 * no prefix) and *q empty. Defined in trialreq_load.c (xmtcommon_tools: it parses JSON).
 * Free a decoded q with xmt_trialreq_free. */
int xmt_trialreq_decode(const char *text, size_t len, xmt_trialreq *q, char *err, size_t errcap);

/* The same from JSON already parsed (a json_t *, as void * to keep jansson out of this
 * header): for xmt_trialreq_decode. */
int xmt_trialreq_from_json(const void *root, xmt_trialreq *q, char *err, size_t errcap);

/* Frees what a decoded q owns and zeroes it. */
void xmt_trialreq_free(xmt_trialreq *q);

/* Whether c's arguments fit the kernel's parameters (nparams, sizes[i] bytes each): each
 * names a parameter, of 8 bytes at most, and is no wider than it, 1 byte at least. 0, or
 * -1 with why. */
int xmt_tr_args_check(const xmt_tr_candidate *c, size_t nparams, const uint32_t *sizes, char *why,
                      size_t cap);

#endif
