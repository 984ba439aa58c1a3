/* xmt_policy.h - the policy library: what the shim knows of policy files.
 *
 * A policy file (YAML, see docs/policy.md) says which kernels xmatune may tune, over
 * which launch configurations, keyed on which launch arguments, and which buffers need
 * resetting, restoring or verifying while candidates are benchmarked. This header is the
 * whole interface between the policy library (libxmtpolicy.a, no CUDA dependency) and its
 * users (the shim, the xmatune command, the tests).
 *
 * Life cycle: xmt_policy_load() once; then any number of threads may call every other
 * function concurrently until xmt_policy_free(). Entries returned by xmt_policy_match()
 * live as long as the set. Evaluation (keys, candidates, buffers) allocates nothing,
 * takes no lock and never crashes on bad values: a division by zero, an overflow or an
 * out-of-range result makes that key/config/buffer invalid instead.
 *
 * Messages: errors and warnings go to a caller-supplied xmt_diag_fn, one call per
 * message, without trailing newline. Load errors read "file:line:col: what was expected"
 * (1-based); match warnings read "file:line: ..." naming the entries concerned.
 */
#ifndef XMT_POLICY_H
#define XMT_POLICY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Limits. A policy that exceeds one gets an error naming the limit. */
#define XMT_MAX_FILE_BYTES (1 << 20) /* one policy file */
#define XMT_MAX_YAML_NODES 100000    /* YAML nodes visited per file, aliases expanded */
#define XMT_MAX_ITERATIONS 10000     /* timed runs per candidate (iterations:) */
#define XMT_MAX_YAML_DEPTH 64        /* nested lists and maps, checked before loading */
#define XMT_MAX_ENTRIES 4096         /* kernel entries per set */
#define XMT_MAX_PARAMS 128           /* declared kernel parameters */
#define XMT_MAX_FIELDS 64            /* named fields of one bytes(N) parameter */
#define XMT_MAX_BLOB_BYTES 32768     /* bytes(N): N at most this */
#define XMT_MAX_DIMS 8               /* tensor rank */
#define XMT_MAX_TRIGGERS 32          /* triggers + functional_triggers */
#define XMT_MAX_TUNABLES 16          /* names in space:/configs: */
#define XMT_MAX_SPACE 65536          /* cartesian product of space: */
#define XMT_MAX_CONFIGS 4096         /* items of configs: */
#define XMT_MAX_EXPR_CHARS 1024      /* one expression's text */
#define XMT_MAX_EXPR_DEPTH 32        /* nesting of one expression's text */
#define XMT_MAX_EXPR_INSNS 1024      /* compiled size, tensor attributes inlined */
#define XMT_KEY_MAX 512              /* bytes of one lookup key */
#define XMT_NAME_MAX 64              /* identifiers: parameters, tensors, space values */

typedef void (*xmt_diag_fn)(void *ud, const char *msg);
typedef struct xmt_policy_set xmt_policy_set;
typedef struct xmt_entry xmt_entry;

/* Loads a policy file, or every *.yaml / *.yml file of a directory in name order (not
 * recursive). Every error goes to diag (may be NULL); the entries that had none are kept.
 * Returns the number of errors; *out is always set to a set (possibly empty) that the
 * caller frees with xmt_policy_free, unless out is NULL. */
int xmt_policy_load(const char *path, xmt_policy_set **out, xmt_diag_fn diag, void *ud);
/* Same, from a string in memory; `name` is used in messages. */
int xmt_policy_load_string(const char *name, const char *text, size_t len, xmt_policy_set **out,
                           xmt_diag_fn diag, void *ud);
void xmt_policy_free(xmt_policy_set *set);
size_t xmt_policy_count(const xmt_policy_set *set);
/* The i-th entry in load order (for tools); NULL when out of range. */
const xmt_entry *xmt_policy_entry(const xmt_policy_set *set, size_t i);

/* Demangles with libiberty. name: without return type and parameter list, as
 * xmt_sig_read reads it from sig ("ns::foo<float, 128>"); sig: name plus parameter
 * list, without return type
 * ("ns::foo<float, 128>(float*, int)"). A name that does not demangle (extern "C",
 * Triton) comes back unchanged in both. Either buffer may be NULL. Returns 1 when
 * demangled, 0 when returned as is, -1 when a buffer was too small (truncated). */
int xmt_demangle(const char *mangled, char *name, size_t name_cap, char *sig, size_t sig_cap);

/* --- demangled signatures (policy/signature.c) --------------------------------------- */
/* The one reader of demangled C++ signatures: everything in xmatune that asks what a
 * kernel's name or parameters are asks this. What one parameter's type is: */
typedef enum {
    XMT_SIG_UNKNOWN = 0, /* empty, "...", or not readable */
    XMT_SIG_POINTER,     /* '*' at the type's top level, or a reference (& or &&): passed as
                            a pointer ("float const* __restrict", "float&", "float (*) [4]") */
    XMT_SIG_FUNCPTR,     /* a pointer or reference to a function: "void (*)(int)" */
    XMT_SIG_INT,         /* an integer (bool and the char types too): bytes, is_signed */
    XMT_SIG_FLOAT,       /* float, double, __half, __nv_bfloat16, c10::Half, ...: bytes */
    XMT_SIG_STRUCT       /* anything else, passed by value (structs, enums, member pointers) */
} xmt_sig_class;
typedef struct {
    const char *text; /* the type as written in the signature (points into it), trimmed */
    size_t len;
    xmt_sig_class cls;
    int dtype;      /* XMT_DT_* of an INT or FLOAT, of a POINTER's pointee when that is one
                       scalar ("float const*": f32), else -1 */
    unsigned bytes; /* INT and FLOAT: width; POINTER and FUNCPTR: 8; else 0 (unknown) */
    int is_signed;  /* INT: 1 signed, 0 unsigned */
} xmt_sig_param;
typedef struct {
    const char *name; /* points into the signature: the name without return type and
                         parameter list, what match: globs ("ns::foo<float, 128>"); the
                         whole text (trimmed) when there is no list */
    size_t name_len;
    const char *list; /* the parameter list with its parentheses, "(float*, int)"; NULL
                         when there is none */
    size_t list_len;
    int nparams; /* -1 when there is no list (extern "C", Triton) or it cannot be read */
} xmt_sig;
/* Reads a demangled name (with or without return type, "void k<(int)128>(float*, int)"
 * or "k<(int)128>(float*, int)"; cv/ref qualifiers and " [clone .x]" after the list are
 * skipped) into *sig and the first cap parameters into params (may be NULL when cap is
 * 0). A name that is not a function signature (extern "C", Triton, NULL, or text whose
 * parentheses do not balance) has no list: nparams -1, name the whole text. Reads only
 * up to the terminating NUL, allocates nothing. Returns sig->nparams (which may exceed
 * cap: only cap parameters are filled). */
int xmt_sig_read(const char *demangled, xmt_sig *sig, xmt_sig_param *params, size_t cap);
/* The name xmt_sig_read reads (no return type, no list) copied into buf (truncated at
 * cap - 1, always terminated when cap > 0), for tables and messages. Returns its length. */
size_t xmt_sig_name(const char *demangled, char *buf, size_t cap);

/* The entry for a kernel, or NULL. Precedence when several entries match: mangled: (exact)
 * over signature: over match:; then the pattern with more literal (non-wildcard)
 * characters; then the first loaded. A warning names every matching entry and the one
 * used. When the entry gives parameter names without types, the types are taken from
 * the demangled signature here (the entry returned is a per-signature copy owned by the
 * set); if the signature has none or they do not fit, a warning says why and NULL is
 * returned. Takes a lock and may allocate: call it once per kernel, not per launch. */
const xmt_entry *xmt_policy_match(const xmt_policy_set *set, const char *mangled, xmt_diag_fn diag,
                                  void *ud);
/* Does the entry fit that kernel's demangled signature: the parameter count, each declared
 * type's size, the types an untyped name takes from it? 0 fits, -1 does not (why says
 * what differs), 1 cannot tell (an extern "C" or Triton name carries no types; why says
 * so). For xmatune check: the shim decides with xmt_policy_match() and the driver's
 * layout. */
int xmt_entry_check_signature(const xmt_entry *e, const char *mangled, char *why, size_t cap);
/* Does this entry's pattern match that kernel (no precedence, no warning)? 1/0. */
int xmt_entry_matches(const xmt_entry *e, const char *mangled);

const char *xmt_entry_origin(const xmt_entry *e);  /* "file:line" of the entry, for logs */
const char *xmt_entry_pattern(const xmt_entry *e); /* "match: saxpy*" */

/* Layout check at first sight of a kernel: n params with offsets/sizes from the driver.
 * Compares the count and each parameter's size. Returns 0 when they fit, -1 when not
 * (why = both layouts, e.g. "policy: 4 params (4, 4, 8, 8 bytes); kernel: 3 params
 * (4@0, 8@8, 8@16)"). */
int xmt_entry_check_layout(const xmt_entry *e, size_t n, const size_t *offsets, const size_t *sizes,
                           char *why, size_t cap);

typedef struct {
    uint32_t x, y, z;
} xmt_dim3;
typedef struct {
    xmt_dim3 grid, block;
    uint32_t shared;
} xmt_dims;
/* Device and kernel attributes usable in expressions. A value <= 0 means unknown: the
 * limit it stands for is then not checked (an expression naming it still reads it). */
typedef struct {
    int64_t sm_count, max_threads_per_block, max_shared_per_block, cc_major, cc_minor, warp_size,
        l2_bytes, max_grid_x, max_grid_y, max_grid_z, max_block_x, max_block_y, max_block_z,
        kernel_max_threads, kernel_static_shared;
} xmt_attrs;
typedef struct {
    void *const *params; /* params[i] points to argument i's bytes, as in kernelParams */
    size_t nparams;
    xmt_dims orig;          /* the program's own launch: grid0.x, block0.y, shared0 ... */
    const xmt_attrs *attrs; /* may be NULL: expressions naming an attribute then fail */
} xmt_launch_view;

/* Lookup key: compact binary, fixed layout per entry, no allocation. Returns its length,
 * 0 on error (cap too small, an argument the view lacks, an evaluation error). Two
 * launches get the same key exactly when every trigger has the same value. An entry
 * without triggers gives every launch the same 1-byte key (rendered "(no triggers)"). */
size_t xmt_entry_key(const xmt_entry *e, const xmt_launch_view *v, uint8_t *key, size_t cap);
/* Readable form of a key: "x.shape=(1024,), x.dtype=f32, big=1". Returns the length
 * written (truncated at cap), -1 when the key does not belong to this entry. */
int xmt_entry_key_render(const xmt_entry *e, const uint8_t *key, size_t len, char *buf, size_t cap);

#define XMT_MAX_ARG_OVERRIDES 8
typedef struct {
    xmt_dims dims;  /* block from launch: block (else block0); grid from launch: grid, else
                       the original threads per dim cdiv(grid0.x*block0.x, block.x);
                       shared from launch: shared, else shared0 */
    unsigned nargs; /* scalar kernel arguments the config sets */
    struct {
        unsigned param;
        uint64_t value;
        unsigned size;
    } args[XMT_MAX_ARG_OVERRIDES]; /* value's low `size` bytes, little-endian, declared type */
    char label[160];               /* "BLOCK=256, ITEMS=4" for logs ("" from xmt_entry_config) */
    char why[160];                 /* when invalid: "condition false", "division by zero in grid.x",
                                      "block 2048 > kernel_max_threads 1024" ... */
    long config;                   /* which: xmt_entry_candidate's i, or XMT_CAND_PIN */
} xmt_candidate;
#define XMT_CAND_PIN (-2L) /* xmt_candidate.config of the pin */
/* configs: items, then the points of space: (last name varies fastest). The pin is separate. */
size_t xmt_entry_ncandidates(const xmt_entry *e);
/* 1 valid, 0 invalid (out->why set; out->label always set). */
int xmt_entry_candidate(const xmt_entry *e, size_t i, const xmt_launch_view *v, xmt_candidate *out);
/* 1 if pinned and valid, 0 if no pin, -1 invalid pin (out->why). */
int xmt_entry_pin(const xmt_entry *e, const xmt_launch_view *v, xmt_candidate *out);
/* xmt_entry_candidate (config >= 0) or xmt_entry_pin (XMT_CAND_PIN), with the same answer,
 * dims and args, but no label (out->label is ""): for the launch path, which needs only
 * the dims and args, and where formatting the label cost more than all the rest (~7,000
 * instructions for the five names of an auto entry's config). */
int xmt_entry_config(const xmt_entry *e, long config, const xmt_launch_view *v, xmt_candidate *out);
/* The label of c's config (c->config) into buf, as xmt_entry_candidate writes it: for a
 * message about a candidate from xmt_entry_config. 0, or -1 when c->config is none of e's. */
int xmt_entry_label(const xmt_entry *e, const xmt_candidate *c, char *buf, size_t cap);
/* Marks in read[] (n long, zeroed first) the parameters whose values a launch's key and
 * its decided config can depend on: those the key's slots, the conditions and the launch
 * and argument expressions (the entry's, every config's, the pin's) load. A launch whose
 * marked arguments, dims and device equal an earlier one's has that one's key and
 * configs (the tuner's per-thread memo compares only these). Returns how many. */
size_t xmt_entry_params_read(const xmt_entry *e, uint8_t *read, size_t n);

enum { XMT_BUF_RESET = 1, XMT_BUF_RESTORE = 2, XMT_BUF_VERIFY = 4 };
typedef enum {
    XMT_DT_I8,
    XMT_DT_I16,
    XMT_DT_I32,
    XMT_DT_I64,
    XMT_DT_U8,
    XMT_DT_U16,
    XMT_DT_U32,
    XMT_DT_U64,
    XMT_DT_F16,
    XMT_DT_BF16,
    XMT_DT_F32,
    XMT_DT_F64,
    XMT_DT_BYTES
} xmt_dtype;
const char *xmt_dtype_name(xmt_dtype t); /* "f32" ... "bytes" */
size_t xmt_dtype_size(xmt_dtype t);      /* 4 for f32, 1 for bytes */
/* IEEE half and bfloat16 to and from double (round to nearest even), the one conversion
 * for policies' f16/bf16 arguments and the shim's verification of f16/bf16 buffers. */
double xmt_half_to_double(uint16_t h);
uint16_t xmt_double_to_half(double d);
double xmt_bf16_to_double(uint16_t h);
uint16_t xmt_double_to_bf16(double d);
typedef struct {
    unsigned param; /* which pointer parameter */
    const char *name;
    unsigned roles; /* XMT_BUF_*; XMT_BUF_RESET only when its condition held for this launch */
    uint64_t bytes; /* extent from the tensor's shape/strides and dtype, or its bytes: */
    xmt_dtype dtype;
    double rtol, atol; /* verify tolerance; both 0 = bitwise */
} xmt_buffer;
size_t xmt_entry_nbuffers(const xmt_entry *e);
/* 1 ok, 0 nothing to do for this launch (its only role was a reset whose condition is
 * false), -1 evaluation error. */
int xmt_entry_buffer(const xmt_entry *e, size_t i, const xmt_launch_view *v, xmt_buffer *out);
int xmt_entry_warmup(const xmt_entry *e);       /* -1 = not set (caller: XMATUNE_WARMUP, else 5) */
int xmt_entry_iterations(const xmt_entry *e);   /* -1 = not set (XMATUNE_ITERATIONS, else 10) */
double xmt_entry_budget_ms(const xmt_entry *e); /* < 0 = none */
double xmt_entry_warmup_ms(const xmt_entry *e); /* < 0 = not set (caller: XMATUNE_WARMUP_MS) */
int xmt_entry_use_mean(const xmt_entry *e);     /* -1 not set, 0 median, 1 mean */
int xmt_entry_l2_flush(const xmt_entry *e);     /* -1 not set, 0/1 as given */
enum { XMT_PROTECT_AUTO = 0, XMT_PROTECT_DECLARED = 1 };
int xmt_entry_protect(const xmt_entry *e); /* -1 not set (XMATUNE_PROTECT), else XMT_PROTECT_* */
/* tolerance: the one protect: auto compares float outputs within (the memory a pointer to
 * a float type writes): 1 with *rtol, *atol; 0 when the entry gives none (bitwise). */
int xmt_entry_tolerance(const xmt_entry *e, double *rtol, double *atol);
/* The element type a pointer parameter points to, as the entry says it (its tensors:
 * dtype, or a typed pointer "float*"); -1 when it does not (name-only parameters: the
 * kernel's signature says it). */
int xmt_entry_pointee(const xmt_entry *e, unsigned param);
/* Search over a large space: (policy/search.h). Only the space: is searched; the items
 * of configs: come first (candidates 0 .. nconfigs - 1) and are always tried. */
int xmt_entry_search(const xmt_entry *e); /* search: as written, XMT_SEARCH_UNSET when not */
/* 1 when the tuner searches the space instead of timing every point: search: local, or
 * search: not set and the space larger than XMT_SEARCH_DEFAULT_THRESHOLD points. */
int xmt_entry_searched(const xmt_entry *e);
/* Value counts of the space's names in order (the last varies fastest), up to cap; returns
 * how many names there are (0: no space:). Space point p is candidate first + p, first
 * being xmt_entry_space_first(). */
unsigned xmt_entry_space_dims(const xmt_entry *e, unsigned *dims, unsigned cap);
size_t xmt_entry_space_first(const xmt_entry *e);
/* The search's budget, in points evaluated: search_evals: (a count, or a share of the
 * space rounded down, at least 1), else xmt_search_default_evals(); at most the space. */
size_t xmt_entry_search_evals(const xmt_entry *e);
/* The search's start: the valid point of the space whose config is nearest the program's
 * own launch in v (block, grid and shared memory, and the scalar arguments the config
 * sets against the launch's own: the sum of |log2| of their ratios, a value that differs
 * and is not a positive integer counting 1); ties go to the lower index. A space index
 * (candidate xmt_entry_space_first() + it), SIZE_MAX when no point is valid for v.
 * Evaluates every point: once per key, at tuning time. */
size_t xmt_entry_space_nearest(const xmt_entry *e, const xmt_launch_view *v);
/* A 64-bit fingerprint of what the entry says (its YAML tree: keys, values, order; not
 * comments or layout): editing the entry changes it, editing another entry does not. */
uint64_t xmt_entry_fingerprint(const xmt_entry *e);
/* The pointer arguments the entry declares: `ptr` parameters (typed in params: or from
 * the signature), tensors, and `ptr` fields of bytes(N) parameters. Writes up to cap
 * (parameter index, byte offset in it) pairs; returns how many there are. */
size_t xmt_entry_pointers(const xmt_entry *e, uint32_t *param, uint32_t *offset, size_t cap);

/* --- introspection, for xmatune check and tests --------------------------------------- */
size_t xmt_entry_nparams(const xmt_entry *e);
/* Name, type name ("i32", "ptr", "bytes(16)", "?" when it comes from the signature) and
 * size in bytes (0 when not known yet) of parameter i. 1 ok, 0 out of range. */
int xmt_entry_param(const xmt_entry *e, size_t i, const char **name, const char **type,
                    size_t *size);
/* 1 when some parameter's type comes from the kernel's demangled signature. */
int xmt_entry_needs_signature(const xmt_entry *e);
/* The kernel name of a `mangled:` entry (exact, as written), NULL for a match: or
 * signature: entry: xmatune check demangles it to evaluate the entry by itself. */
const char *xmt_entry_mangled(const xmt_entry *e);
/* Writes the value text (an integer or float literal) into the argument bytes of the
 * parameter or blob field `name` ("n", "s.count"); params[i] must point to at least the
 * parameter's size. 0 ok, -1 unknown name / untyped / bad number (why set). */
int xmt_entry_set_arg(const xmt_entry *e, const char *name, const char *value, void *const *params,
                      char *why, size_t cap);
/* Multi-line human summary of the entry (params, tensors, triggers, space, buffers). */
int xmt_entry_describe(const xmt_entry *e, char *buf, size_t cap);
/* Sets an attribute by name ("sm_count"); 0 ok, -1 unknown name. */
int xmt_attrs_set(xmt_attrs *a, const char *name, int64_t value);
/* Fills a with a typical recent GPU (the values docs/policy.md lists for xmatune check). */
void xmt_attrs_default(xmt_attrs *a);

/* intlike(x), the expression function (docs/policy.md, Expressions): x itself, unless x
 * is a float or its 32 bits look like an IEEE-754 f32 (xmt_f32_like; x within what 4
 * bytes read as a signed or unsigned integer hold), then XMT_INTLIKE_FLOAT. As a key part
 * of an untyped 4-byte argument, a float there then stops making each new value a new key
 * (XMATUNE_AUTO's triggers of extern "C" kernels). isf: x is a float (its bits unread). */
#define XMT_INTLIKE_FLOAT 1065353216 /* 0x3F800000, the bits of 1.0f: as if every float were 1 */
#define XMT_F32_LIKE_EXP 20          /* biased exponent within 127 +/- this */
int64_t xmt_intlike(int isf, int64_t x);
/* Whether 32 bits look like an f32 a program passes: a biased exponent within 127 +/-
 * XMT_F32_LIKE_EXP (|value| from about 9.5e-7 to 2.1e6), sign either; as integers that is
 * 897,581,056 to 1,241,513,983 and -1,249,902,592 to -905,969,665, never a small one. */
int xmt_f32_like(uint32_t u);

/* Compiles and evaluates a standalone expression over the attributes and original launch
 * only (no parameters); for tests, the fuzzer and tools. Returns 0 and *out (as double,
 * *is_float says which), or -1 with a message in err (compile or evaluation error). */
int xmt_expr_eval_string(const char *text, const xmt_launch_view *v, double *out, int64_t *iout,
                         int *is_float, char *err, size_t cap);

/* --- launch idioms (policy/derive.c) -------------------------------------------------- */
/* How a kernel's grid follows its data, told from the launches discover recorded; the
 * stub of `xmatune discover --stub` writes its entries from it. */
#define XMT_DERIVE_MAX_PARAMS 128
typedef enum { XMT_IDIOM_GRID0, XMT_IDIOM_CDIV, XMT_IDIOM_STRIDE, XMT_IDIOM_TILE } xmt_idiom;

typedef struct {
    long long grid[3], block[3], shared, count;
} xmt_shape;

/* What discover recorded of one argument of one launch (`args`' values): nothing (null:
 * a pointer by the signature, a struct, an older log's untyped 8-byte parameter), its
 * value (v[p]), or "pointer" (an untyped 8-byte argument that was memory the driver
 * knows). */
enum { XMT_OBS_NONE, XMT_OBS_VALUE, XMT_OBS_POINTER };
/* One launch discover recorded with its argument values (`args`). */
typedef struct {
    long long grid[3], block[3], shared;
    long long v[XMT_DERIVE_MAX_PARAMS];
    unsigned char has[XMT_DERIVE_MAX_PARAMS]; /* XMT_OBS_* */
} xmt_obs;

typedef struct {
    size_t n;
    xmt_shape s[64 * 4]; /* at most 64 per device in the log; a few devices */
    size_t nobs;
    xmt_obs o[16 * 4]; /* at most 16 per device */
} xmt_shapes;

/* What the stub knows of one parameter. */
typedef struct {
    long long size;
    int is_ptr, is_int, is_struct; /* is_struct: a by-value struct (bytes(N)) */
    int as_float; /* untyped, 4 bytes (or 8, a value), every value seen reads as a float */
    int u8;       /* untyped, 8 bytes: what discover saw there (xmt_untyped8) */
} xmt_pinfo;

/* What the recorded launches say an untyped 8-byte parameter (extern "C", Triton) is. */
typedef enum {
    XMT_U8_UNSEEN,  /* no launch recorded it (an older log): a pointer, as the stub always took */
    XMT_U8_POINTER, /* every launch that recorded it saw memory the driver knows: ptr */
    XMT_U8_VALUE,   /* every one saw a value the driver knows no memory at: i64 (or f64) */
    XMT_U8_MIXED    /* some saw memory, some a value (0 included): left bytes(8) */
} xmt_untyped8;
/* What the launches in sh recorded of parameter p (an untyped 8-byte one). */
xmt_untyped8 xmt_untyped8_kind(const xmt_shapes *sh, size_t p);

/* What ties a grid dimension to an argument: its index, or -1. */
typedef struct {
    int cover[3];             /* grid.d == cdiv(p, block.d) in every launch seen */
    int equal[3];             /* grid.d == p in every launch seen */
    int cover2[3], equal2[3]; /* another argument that fits as well (equal values) */
    int stride;               /* the grid stayed the same while this argument changed */
} xmt_evidence;

/* What the recorded launches tie each grid dimension to (integer arguments only, an i64
 * like an i32: the values recorded, XMT_OBS_VALUE). */
void xmt_find_evidence(const xmt_shapes *sh, const xmt_pinfo *info, size_t np, xmt_evidence *ev);
/* The launch idiom the launches point to: by their values, else by how the program's own
 * grid moved with its block; the reason in why. */
xmt_idiom xmt_pick_idiom(const xmt_shapes *sh, const xmt_evidence *ev, const int tuned[3],
                         char *why, size_t cap);

/* Spaces derived from one launch, for kernels no policy names (XMATUNE_AUTO) and the
 * entries `--write-policy` writes. The rules' version: cache records of auto keys carry
 * it, so changing the rules (below, or the configs derive.c writes) invalidates them. */
/* 2: transposed tiles; 3: an untyped 4-byte scalar keyed by intlike() */
#define XMT_DERIVE_RULES 3
#define XMT_DERIVE_MAX_INT_TRIGGERS 16 /* integer scalars in an auto key; the rest ignored */
#define XMT_DERIVE_MAX_CONFIGS 64      /* configs of one derived entry, at most */
/* The idiom's name: "grid0" (the program's own grid kept, the block varied), "cdiv" (one
 * thread per element: the grid covers grid0 x block0 as the block changes), "stride" (a
 * grid-stride loop: sm_count x BPS blocks), "tile" (2-D/3-D: the grid covers the
 * program's threads in x and y as the tile changes); "?" for another number. */
const char *xmt_idiom_name(int idiom);
/* Writes into buf the text of one policy entry (an item of `kernels:`, indented for it)
 * for the kernel `mangled` with the np parameters info[] describes (typed: their kinds
 * come from the demangled signature, so only names are written): exact name, protect:
 * auto, triggers on the integer scalars (an untyped 4-byte one through intlike(), a
 * functional trigger intlike_pN: it may hold a float) and the program's own launch shape,
 * and configs that try each idiom that fits a launch shaped like orig, each tagged IDIOM (its
 * xmt_idiom), BX, BY, BPS, SCALED (dynamic shared memory scaled with the block, offered
 * only when orig has some). A 1-D block: 5 blocks x {grid0, cdiv} (x2 with shared) plus
 * 4 blocks x 4 BPS of stride (at most 36); a 2-D/3-D block: 8 tiles x {grid0, tile} (x2
 * with shared; at most 32). orig NULL: every config of both, each under a condition on
 * the launch's shape (block0.y, block0.z, shared0), so that one entry fits every key
 * (at most 36 apply to one launch). Kernel and device limits are left to the evaluation of each
 * candidate (xmt_entry_candidate skips what exceeds them). Returns the length, or -1 when
 * cap is too small (for 128 parameters 8 KiB suffices with orig, 32 KiB without).
 * idioms: a mask of (1 << xmt_idiom), only those configs; 0: every idiom. */
int xmt_derive_entry(const char *mangled, const xmt_pinfo *info, size_t np, int typed,
                     const xmt_dims *orig, unsigned idioms, char *buf, size_t cap);
/* What a derived entry says of each of np parameters (sizes as the driver reports them),
 * into info: from the demangled signature when it reads (returns 1: the entry then names
 * them only), else from the sizes (returns 0): 4, 2, 1 bytes an integer (a key part; 4
 * bytes keyed by intlike(), xmt_derive_entry), anything else bytes(N) -- an 8-byte value of an
 * untyped kernel too, since it may be a pointer (protect: auto asks the driver about it) or a
 * 64-bit size. */
int xmt_derive_params(const char *demangled, size_t np, const uint32_t *sizes, xmt_pinfo *info);

#ifdef __cplusplus
}
#endif

/* The search over large spaces (its own module, policy/search.h: CUDA-free, used by the
 * shim's session and the offline evaluator). */
#include "search.h"
/* The edit distance (insertions, deletions, substitutions) of a and b, or cap + 1 when it
 * is larger than cap: only small distances name a likely typo, so long strings (over 64
 * bytes) and lengths further apart than cap stop early. Behind every "did you mean". */
size_t xmt_edit_distance(const char *a, const char *b, size_t cap);

#endif
