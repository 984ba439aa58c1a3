/* load_internal.h - what the loader's files (load*.c) share and nothing else includes:
 * the loader state (ld), the name scopes of expressions, and the ld_* functions. Every
 * ld_fail* longjmps to the entry being compiled (parse_entry in load.c), which drops it.
 */
#ifndef XMT_LOAD_INTERNAL_H
#define XMT_LOAD_INTERNAL_H

#include "entry.h"

#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

typedef struct {
    const char *file;
    xmt_diag_fn diag;
    void *ud;
    int nerr;
    yaml_document_t *doc;
    jmp_buf jb; /* an error inside an entry unwinds to parse_entry */
    struct xmt_entry *cur;
    size_t order;
} ld;

enum {
    SC_PARAMS = 1,
    SC_TENSORS = 2,
    SC_TUNABLES = 4,
    SC_FTRIG = 8,
};

typedef struct {
    struct xmt_entry *e;
    unsigned scope;
    const char *where; /* "a tensor shape", "a functional trigger", ... */
} rctx;

/* load_yaml.c */
void ld_report(ld *L, yaml_mark_t m, const char *fmt, ...);
/* Reports at node n and abandons the current entry. */
__attribute__((noreturn)) void ld_fail(ld *L, const yaml_node_t *n, const char *fmt, ...);
__attribute__((noreturn)) void ld_fail_col(ld *L, const yaml_node_t *n, size_t extra,
                                           const char *fmt, ...);
void *ld_xcalloc(ld *L, const yaml_node_t *n, size_t a, size_t b);
yaml_node_t *ld_node(ld *L, int i);
const char *ld_kind_name(const yaml_node_t *n);
const char *ld_scalar(ld *L, const yaml_node_t *n, const char *what);
int ld_is_null(const yaml_node_t *n);
/* Column offset of the first character of a scalar's text (after an opening quote). */
size_t ld_text_col(const yaml_node_t *n);
int ld_parse_bool(const char *s, int *b);
/* Decimal, or hexadecimal with 0x: never octal, "010" is ten. */
int ld_num_base(const char *s);
int64_t ld_get_int(ld *L, const yaml_node_t *n, const char *what, int64_t lo, int64_t hi);
double ld_get_double(ld *L, const yaml_node_t *n, const char *what, double lo, double hi);
/* A number literal as a value: integer when it reads as one, else a float. */
xmt_val ld_get_number(ld *L, const yaml_node_t *n, const char *what);
int ld_get_bool(ld *L, const yaml_node_t *n, const char *what);
int ld_valid_ident(const char *s);
/* Walks a mapping: every key must be a scalar, appear once, and be one of allowed (NULL:
 * any). Fills vals[i] with the value node of allowed[i], or NULL. */
void ld_map_keys(ld *L, const yaml_node_t *m, const char *what, const char *const *allowed,
                 size_t nallowed, yaml_node_t **vals);
/* Only the duplicate check, for mappings whose keys are user names. */
void ld_map_names(ld *L, const yaml_node_t *m, const char *what);

/* load_names.c */
int ld_find_param(const struct xmt_entry *e, const char *name);
int ld_find_tun(const struct xmt_entry *e, const char *name);
int ld_find_ft(const struct xmt_entry *e, const char *name);
int ld_resolve(void *vctx, const xmt_path *p, xmt_ref *r, char *err, size_t cap);
/* Compiles the scalar node n as an expression in the given scope. */
void ld_compile(ld *L, const yaml_node_t *n, unsigned scope, const char *where, xmt_code *out);
void ld_check_new_name(ld *L, const yaml_node_t *n, const char *name, const char *what);

/* load_params.c */
void ld_parse_params(ld *L, const yaml_node_t *n);

/* load_tensors.c */
void ld_parse_tensors(ld *L, const yaml_node_t *n);

/* load_launch.c */
/* Collects the tunable names: the space's, else the first config's. */
void ld_collect_tunables(ld *L, const yaml_node_t *space, const yaml_node_t *configs);
void ld_parse_args(ld *L, const yaml_node_t *n, xmt_args *a);
void ld_parse_launch(ld *L, const yaml_node_t *n, xmt_launch_exprs *l);
/* One item of configs:, or the pin. */
void ld_parse_config(ld *L, const yaml_node_t *n, xmt_config *c, const char *what);
void ld_parse_space(ld *L, const yaml_node_t *n);
/* Marks the parameters that any args: sets (the entry's, each config's, the pin's). */
void ld_mark_all_args(ld *L, const yaml_node_t *args, const yaml_node_t *configs,
                      const yaml_node_t *pin);
/* configs: a non-empty list of configs. */
void ld_parse_configs(ld *L, const yaml_node_t *c);

/* load_trigger.c */
/* The lookup key: functional triggers, then triggers, then their slots in key order. */
void ld_parse_key(ld *L, const yaml_node_t *m, const yaml_node_t *ftrig, const yaml_node_t *trig);

/* load_buffers.c */
/* reset_to_zero:, restore:, verify: (the buffers that benchmarking must look after). */
/* tolerance: {rtol: R, atol: A} (after protect:, which it checks against). */
void ld_parse_tolerance(ld *L, const yaml_node_t *n);
void ld_parse_buffers(ld *L, const yaml_node_t *m, const yaml_node_t *reset,
                      const yaml_node_t *restore, const yaml_node_t *verify);

#endif
