/* entry.h - the compiled form of one policy entry, shared by the loader (load*.c), the
 * matcher (match.c) and the evaluation side (entry.c).
 *
 * An entry owns everything it was compiled into: parameter declarations, tensors, key
 * slots, tunables, configs, launch and argument expressions, buffers. Evaluation reads it
 * without locks. The only per-kernel variation is the parameter types when the policy
 * gives names alone: xmt_policy_match() then makes a shallow copy whose ptypes/psizes come
 * from the demangled signature (owner = 0: it frees only those two arrays).
 */
#ifndef XMT_ENTRY_H
#define XMT_ENTRY_H

#include "expr.h"
#include "xmt_policy.h"

#include <pthread.h>

typedef struct {
    char name[XMT_NAME_MAX];
    uint8_t type;
    uint32_t offset;
} xmt_field;

typedef struct {
    char name[XMT_NAME_MAX];
    char tname[48]; /* as declared: "i32", "float*", "bytes(16)", "?" */
    uint8_t type;   /* declared XMT_DT_* / XMT_PT_*; the evaluated one is entry->ptypes */
    int pointee;    /* dtype of a typed pointer ("float*"), -1 */
    uint32_t size;  /* declared size, 0 when unknown */
    int tensor;     /* index in tensors, -1 */
    int tuned;      /* set by args: of a config: no trigger may name it */
    xmt_field *fields;
    unsigned nfields;
} xmt_param;

typedef struct {
    char name[XMT_NAME_MAX];
    unsigned param;
    xmt_dtype dtype;
    int ndim; /* -1: declared by bytes: alone */
    xmt_code shape[XMT_MAX_DIMS], stride[XMT_MAX_DIMS];
    xmt_code numel, nbytes;
    int has_bytes;
    xmt_code bytes;
    char desc[256]; /* "f32 [m, k] strides [lda, 1]", for summaries */
} xmt_tensor;

enum { XMT_SLOT_EXPR, XMT_SLOT_DTYPE };
/* Bytes that one XMT_SLOT_EXPR slot takes in a lookup key: a tag byte (0 integer,
 * 1 float) then the value's 8 bytes. An XMT_SLOT_DTYPE slot takes 1 byte, the dtype. */
#define XMT_KEY_SLOT 9
typedef struct {
    uint8_t kind, dtype;
    uint8_t orig1; /* 1 + the original-launch value the slot copies (xmt_code_orig_leaf),
                      0: evaluated */
    xmt_code code;
} xmt_slot;

enum { XMT_TR_SCALAR, XMT_TR_TUPLE, XMT_TR_TENSOR, XMT_TR_DTYPE };
typedef struct {
    char label[96];
    int form;
    unsigned first, nslots;
    unsigned ndim; /* XMT_TR_TENSOR: slots are dtype, ndim shapes, ndim strides */
} xmt_trigger;

typedef struct {
    int set; /* grid/block/shared given */
    unsigned n;
    xmt_code c[3];
} xmt_dimexpr;

typedef struct {
    xmt_dimexpr grid, block, shared;
} xmt_launch_exprs;

typedef struct {
    unsigned param;
    xmt_code code;
} xmt_argexpr;

typedef struct {
    unsigned nargs;
    xmt_argexpr a[XMT_MAX_ARG_OVERRIDES];
} xmt_args;

typedef struct {
    xmt_val vals[XMT_MAX_TUNABLES];
    int has_cond;
    xmt_code cond;
    xmt_launch_exprs launch; /* fields set override the entry's */
    xmt_args args;           /* params set override the entry's */
    int line;
} xmt_config;

typedef struct {
    char name[XMT_NAME_MAX];
    xmt_val *vals;
    unsigned n;
} xmt_spacedim;

typedef struct {
    char name[XMT_NAME_MAX];
    unsigned param;
    int tensor;
    unsigned roles;
    int has_cond;
    xmt_code cond;
    double rtol, atol;
} xmt_bufdecl;

typedef enum { XMT_PAT_MATCH = 1, XMT_PAT_SIGNATURE = 2, XMT_PAT_MANGLED = 3 } xmt_patkind;

struct xmt_entry {
    int owner;
    char origin[300];
    char pattern_text[300]; /* "match: saxpy*" */
    xmt_patkind patkind;
    char *pattern;
    size_t order; /* load order, for precedence */

    xmt_param *params;
    unsigned nparams;
    uint8_t *ptypes;  /* evaluated types (specialised copies differ) */
    uint32_t *psizes; /* evaluated sizes */
    int needs_sig;

    xmt_tensor *tensors;
    unsigned ntensors, ntensors_alloc;

    char ftnames[XMT_MAX_TRIGGERS][XMT_NAME_MAX];
    xmt_code ftcode[XMT_MAX_TRIGGERS];
    unsigned nft;

    xmt_slot *slots;
    unsigned nslots;
    xmt_trigger *triggers;
    unsigned ntriggers;
    size_t keylen;

    char tunames[XMT_MAX_TUNABLES][XMT_NAME_MAX];
    unsigned ntun;
    xmt_spacedim *space;
    unsigned nspace;
    size_t spacesize;
    xmt_config *configs;
    unsigned nconfigs;
    int has_pin;
    xmt_config pin;

    int has_cond;
    xmt_code cond;
    xmt_launch_exprs launch;
    xmt_args args;

    xmt_bufdecl *bufs;
    unsigned nbufs;

    int warmup, iterations, use_mean, l2_flush;
    int protect;          /* XMT_PROTECT_*, -1 not set */
    uint64_t fingerprint; /* of what the entry says (load.c node_hash) */
    double budget_ms;
    double warmup_ms;          /* clock warm-up by time; -1: XMATUNE_WARMUP_MS */
    int search;                /* XMT_SEARCH_*: XMT_SEARCH_UNSET, the size decides */
    int search_evals;          /* a count; -1 not set */
    double search_share;       /* search_evals: as a share (0 .. 1]; -1 not set */
    double tol_rtol, tol_atol; /* tolerance: (protect: auto's float outputs); -1 not set */
};

struct xmt_spec {
    struct xmt_spec *next;
    const struct xmt_entry *base;
    char *sig;
    struct xmt_entry *e; /* NULL: the signature did not fit (warned once per kernel) */
};

struct xmt_policy_set {
    struct xmt_entry **v;
    size_t n, cap;
    pthread_mutex_t mu;
    struct xmt_spec *specs;
};

/* Frees what the entry owns (everything when owner, else ptypes/psizes) and e itself. */
void xmt_entry_destroy(struct xmt_entry *e);
/* Appends to a set (load.c); -1 when out of memory or too many entries. */
int xmt_set_add(struct xmt_policy_set *s, struct xmt_entry *e);

#endif
