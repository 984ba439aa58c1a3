/* xmatune.c - the xmatune command: one table of subcommands (check here; run, report,
 * cache and options in commands.c), each a function taking its own argv.
 *
 * `xmatune check FILE|DIR...` loads policies exactly as the shim does, prints every error
 * ("file:line:col: ...") or, per entry, a summary: pattern, parameters, key fields,
 * candidates, and for example values given on the command line (--set, --attr, --grid0,
 * --block0, --shared0) the key, which candidates are valid and why the others are not,
 * and the buffer sizes; --kernel NAME says which entry a kernel gets.
 */
#include "commands.h"
#include "xmt_policy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*cmd_fn)(int argc, char **argv);
typedef struct {
    const char *name;
    cmd_fn fn;
    const char *summary;
} subcommand;

static int cmd_check(int argc, char **argv);
static int cmd_help(int argc, char **argv);

/* Add a subcommand here: name, function, one-line summary for `xmatune help`. */
static const subcommand commands[] = {
    {"check", cmd_check, "validate policy files and summarise each entry"},
    {"discover", cmd_discover,
     "run a program in discover mode: its kernels, shapes, a policy stub"},
    {"run", cmd_run, "run a program under the shim (xmatune run --tune --policy P -- ./app)"},
    {"report", cmd_report, "print a log (XMATUNE_LOG) as tables: tunings, kernels"},
    {"cache", cmd_cache, "print an on-disk cache (XMATUNE_CACHE) as a table"},
    {"options", cmd_options, "print the XMATUNE_* variables as a Markdown table"},
    {"help", cmd_help, "list the subcommands"},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void usage_check(FILE *f)
{
    fprintf(f,
            "usage: xmatune check [options] FILE|DIR...\n"
            "  --set NAME=VALUE      an argument's value for the summary (n=1048576, cfg.count=4)\n"
            "  --attr NAME=VALUE     a device/kernel attribute (max_threads_per_block=1024)\n"
            "  --grid0 X[,Y[,Z]]     the program's own grid (default 1,1,1)\n"
            "  --block0 X[,Y[,Z]]    the program's own block (default 256,1,1)\n"
            "  --shared0 BYTES       the program's own dynamic shared memory (default 0)\n"
            "  --kernel NAME         a kernel's (mangled) name: which entry applies to it\n"
            "  --all                 list every candidate (default: at most 16)\n"
            "  -q, --quiet           print errors only\n"
            "Exit status: 0 no errors, 1 errors, 2 usage.\n");
}

static int cmd_help(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    printf("usage: xmatune COMMAND [ARGS]\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        printf("  %-8s %s\n", commands[i].name, commands[i].summary);
    return 0;
}

static void print_diag(void *ud, const char *msg)
{
    (void)ud;
    fprintf(stderr, "%s\n", msg);
}

static int parse_dim3(const char *s, xmt_dim3 *d)
{
    unsigned long v[3] = {1, 1, 1};
    char *end;
    const char *p = s;
    for (int i = 0; i < 3; i++) {
        errno = 0;
        v[i] = strtoul(p, &end, 10);
        if (end == p || errno || v[i] == 0 || v[i] > 0xffffffffUL) return -1;
        if (*end == 0) break;
        if (*end != ',' || i == 2) return -1;
        p = end + 1;
    }
    d->x = (uint32_t)v[0];
    d->y = (uint32_t)v[1];
    d->z = (uint32_t)v[2];
    return 0;
}

typedef struct {
    char **sets;
    int nsets;
    char **kernels;
    int nkernels;
    xmt_attrs attrs;
    xmt_dims orig;
    int all, quiet;
} check_opts;

static void print_dims(const xmt_dims *d)
{
    printf("grid (%u,%u,%u) block (%u,%u,%u) shared %u", d->grid.x, d->grid.y, d->grid.z,
           d->block.x, d->block.y, d->block.z, d->shared);
}

/* The example launch's arguments: zeros, pointers distinct and aligned; then --set. */
static void **example_params(const xmt_entry *e, size_t np)
{
    void **params = calloc(np ? np : 1, sizeof *params);
    int ok = params != NULL;
    for (size_t i = 0; ok && i < np; i++) {
        const char *name, *type;
        size_t size;
        xmt_entry_param(e, i, &name, &type, &size);
        params[i] = calloc(1, size < 8 ? 8 : size);
        if (!params[i])
            ok = 0;
        else if (!strcmp(type, "ptr")) {
            uint64_t fake = 0x100000ull * (i + 1); /* aligned, distinct, never dereferenced */
            memcpy(params[i], &fake, 8);
        }
    }
    if (!ok) {
        for (size_t i = 0; params && i < np; i++)
            free(params[i]);
        free(params);
        fprintf(stderr, "xmatune: out of memory\n");
        return NULL;
    }
    return params;
}

/* Applies and prints the --set values that name one of the entry's parameters. */
static void apply_sets(const xmt_entry *e, const check_opts *o, void **params, size_t np)
{
    printf("  example launch:");
    for (int s = 0; s < o->nsets; s++) {
        char name[256], why[256];
        /* o->sets[0..nsets) are all set (the analyzer sees only the calloc) */
        const char *eq = strchr(o->sets[s], '='); // NOLINT(clang-analyzer-core.NonNullParamChecker)
        size_t nl = (size_t)(eq - o->sets[s]);
        if (nl >= sizeof name) continue;
        memcpy(name, o->sets[s], nl);
        name[nl] = 0;
        char base[256];
        snprintf(base, sizeof base, "%s", name);
        char *dot = strchr(base, '.');
        if (dot) *dot = 0;
        int has = 0;
        for (size_t i = 0; i < np; i++) {
            const char *pn;
            xmt_entry_param(e, i, &pn, NULL, NULL);
            has |= !strcmp(pn, base);
        }
        if (!has) continue;
        if (xmt_entry_set_arg(e, name, eq + 1, params, why, sizeof why))
            printf(" [%s]", why);
        else
            printf(" %s=%s", name, eq + 1);
    }
    printf(" (other arguments 0), ");
    print_dims(&o->orig);
    printf("\n");
}

static void print_key(const xmt_entry *e, const xmt_launch_view *v)
{
    uint8_t key[XMT_KEY_MAX];
    size_t kl = xmt_entry_key(e, v, key, sizeof key);
    if (kl) {
        char buf[2048];
        xmt_entry_key_render(e, key, kl, buf, sizeof buf);
        printf("    key: %s (%zu bytes)\n", buf, kl);
    } else {
        printf("    key: cannot be computed for these values (an expression fails)\n");
    }
}

static void print_candidates(const xmt_entry *e, const xmt_launch_view *v, int all)
{
    size_t nc = xmt_entry_ncandidates(e), nvalid = 0, shown = 0;
    for (size_t i = 0; i < nc; i++) {
        xmt_candidate c;
        nvalid += xmt_entry_candidate(e, i, v, &c) == 1;
    }
    printf("    space after conditions: %zu of %zu candidates valid\n", nvalid, nc);
    for (size_t i = 0; i < nc; i++) {
        xmt_candidate c;
        int r = xmt_entry_candidate(e, i, v, &c);
        if (!all && shown >= 16) {
            printf("      ... (%zu more; --all lists them)\n", nc - i);
            break;
        }
        shown++;
        printf("      %-7s %s: ", r == 1 ? "valid" : "invalid", c.label);
        if (r == 1) {
            print_dims(&c.dims);
            for (unsigned a = 0; a < c.nargs; a++) {
                const char *pn;
                xmt_entry_param(e, c.args[a].param, &pn, NULL, NULL);
                printf(", args %s=%llu (0x%llx, %u bytes)", pn, (unsigned long long)c.args[a].value,
                       (unsigned long long)c.args[a].value, c.args[a].size);
            }
        } else {
            printf("%s", c.why);
        }
        printf("\n");
    }
}

static void print_pin_and_buffers(const xmt_entry *e, const xmt_launch_view *v)
{
    xmt_candidate pc;
    int pr = xmt_entry_pin(e, v, &pc);
    if (pr) {
        printf("    %s: ", pc.label);
        if (pr == 1)
            print_dims(&pc.dims);
        else
            printf("invalid: %s", pc.why);
        printf("\n");
    }
    for (size_t i = 0; i < xmt_entry_nbuffers(e); i++) {
        xmt_buffer b;
        int r = xmt_entry_buffer(e, i, v, &b);
        if (r < 0) {
            printf("    buffer %s: size cannot be computed for these values\n",
                   b.name ? b.name : "?");
            continue;
        }
        printf("    buffer %s: %llu bytes (%s%s%s%s)", b.name, (unsigned long long)b.bytes,
               (b.roles & XMT_BUF_RESET) ? "reset " : "",
               (b.roles & XMT_BUF_RESTORE) ? "restore " : "",
               (b.roles & XMT_BUF_VERIFY) ? "verify " : "",
               r == 0 ? "nothing to do for this launch" : "");
        if ((b.roles & XMT_BUF_VERIFY) && (b.rtol > 0 || b.atol > 0))
            printf(", rtol %g atol %g", b.rtol, b.atol);
        printf("\n");
    }
}

/* Evaluates the entry for the example launch the options describe. */
static void summarise_launch(const xmt_entry *e, const check_opts *o)
{
    size_t np = xmt_entry_nparams(e);
    if (xmt_entry_needs_signature(e)) {
        printf("  (parameter types come from the kernel's signature: give --kernel MANGLED_NAME to "
               "evaluate)\n");
        return;
    }
    void **params = example_params(e, np);
    if (!params) return;
    apply_sets(e, o, params, np);
    xmt_launch_view v = {params, np, o->orig, &o->attrs};
    print_key(e, &v);
    print_candidates(e, &v, o->all);
    print_pin_and_buffers(e, &v);
    for (size_t i = 0; i < np; i++)
        free(params[i]);
    free(params);
}

/* One option taking a value (--set, --attr, --grid0, --block0, --shared0, --kernel).
 * Returns 0, or 2 after saying what is wrong. */
static int check_option_value(check_opts *o, const char *a, char *val)
{
    if (!strcmp(a, "--set")) {
        if (!strchr(val, '=')) {
            fprintf(stderr, "xmatune check: --set expects NAME=VALUE, not '%s'\n", val);
            return 2;
        }
        o->sets[o->nsets++] = val;
    } else if (!strcmp(a, "--attr")) {
        const char *eq = strchr(val, '=');
        char name[64], *end;
        if (!eq || (size_t)(eq - val) >= sizeof name) {
            fprintf(stderr, "xmatune check: --attr expects NAME=VALUE, not '%s'\n", val);
            return 2;
        }
        memcpy(name, val, (size_t)(eq - val));
        name[eq - val] = 0;
        errno = 0;
        long long v = strtoll(eq + 1, &end, 0);
        if (end == eq + 1 || *end || errno || xmt_attrs_set(&o->attrs, name, v)) {
            fprintf(stderr, "xmatune check: --attr %s: unknown attribute or bad number\n", val);
            return 2;
        }
    } else if (!strcmp(a, "--grid0") || !strcmp(a, "--block0")) {
        if (parse_dim3(val, a[2] == 'g' ? &o->orig.grid : &o->orig.block)) {
            fprintf(stderr, "xmatune check: %s expects X[,Y[,Z]] of positive numbers, not '%s'\n",
                    a, val);
            return 2;
        }
    } else if (!strcmp(a, "--shared0")) {
        char *end;
        errno = 0;
        unsigned long v = strtoul(val, &end, 10);
        if (end == val || *end || errno || v > 0xffffffffUL) {
            fprintf(stderr, "xmatune check: --shared0 expects a byte count, not '%s'\n", val);
            return 2;
        }
        o->orig.shared = (uint32_t)v;
    } else {
        o->kernels[o->nkernels++] = val;
    }
    return 0;
}

/* The command line: options into o, files into files. Returns -1 to go on, else the
 * exit status (0 after --help). */
static int parse_check_args(int argc, char **argv, check_opts *o, char **files, int *nfiles)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage_check(stdout);
            return 0;
        } else if (!strcmp(a, "--all")) {
            o->all = 1;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            o->quiet = 1;
        } else if (!strcmp(a, "--set") || !strcmp(a, "--attr") || !strcmp(a, "--grid0") ||
                   !strcmp(a, "--block0") || !strcmp(a, "--shared0") || !strcmp(a, "--kernel")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "xmatune check: %s needs a value\n", a);
                return 2;
            }
            if (check_option_value(o, a, argv[++i])) return 2;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "xmatune check: unknown option %s\n", a);
            usage_check(stderr);
            return 2;
        } else {
            files[(*nfiles)++] = argv[i];
        }
    }
    if (!*nfiles) {
        usage_check(stderr);
        return 2;
    }
    return -1;
}

/* One entry: its description, the --kernel names it matches, its example launch. */
static void check_entry(const xmt_policy_set *set, const xmt_entry *e, const check_opts *o)
{
    char buf[4096];
    printf("%s: %s\n", xmt_entry_origin(e), xmt_entry_pattern(e));
    xmt_entry_describe(e, buf, sizeof buf);
    fputs(buf, stdout);
    const xmt_entry *spec = NULL;
    for (int k = 0; k < o->nkernels; k++) {
        if (!xmt_entry_matches(e, o->kernels[k])) continue;
        char name[1024], sig[2048];
        xmt_demangle(o->kernels[k], name, sizeof name, sig, sizeof sig);
        const xmt_entry *m = xmt_policy_match(set, o->kernels[k], NULL, NULL);
        int wins = m && !strcmp(xmt_entry_origin(m), xmt_entry_origin(e));
        printf("  matches %s (%s)%s\n", o->kernels[k], sig, wins ? "" : ", but another entry wins");
        if (wins && !spec) spec = m;
    }
    summarise_launch(spec ? spec : e, o);
}

/* One policy file or folder. Returns 1 when it has errors. */
static int check_file(const char *file, const check_opts *o)
{
    xmt_policy_set *set = NULL;
    int nerr = xmt_policy_load(file, &set, print_diag, NULL);
    if (!o->quiet) {
        printf("%s: %zu entr%s, %d error%s\n", file, xmt_policy_count(set),
               xmt_policy_count(set) == 1 ? "y" : "ies", nerr, nerr == 1 ? "" : "s");
        for (size_t i = 0; i < xmt_policy_count(set); i++)
            check_entry(set, xmt_policy_entry(set, i), o);
        for (int k = 0; k < o->nkernels; k++) {
            const xmt_entry *m = xmt_policy_match(set, o->kernels[k], print_diag, NULL);
            printf("kernel %s -> %s\n", o->kernels[k],
                   m ? xmt_entry_origin(m) : "no entry (runs untuned)");
        }
    }
    xmt_policy_free(set);
    return nerr ? 1 : 0;
}

static int cmd_check(int argc, char **argv)
{
    check_opts o;
    memset(&o, 0, sizeof o);
    xmt_attrs_default(&o.attrs);
    o.orig.grid = (xmt_dim3){1, 1, 1};
    o.orig.block = (xmt_dim3){256, 1, 1};
    o.sets = calloc((size_t)argc, sizeof *o.sets);
    o.kernels = calloc((size_t)argc, sizeof *o.kernels);
    char **files = calloc((size_t)argc, sizeof *files);
    int nfiles = 0, rc = 0;
    if (!o.sets || !o.kernels || !files) {
        fprintf(stderr, "xmatune: out of memory\n");
        rc = 2;
    } else {
        rc = parse_check_args(argc, argv, &o, files, &nfiles);
        if (rc < 0) {
            rc = 0;
            for (int f = 0; f < nfiles; f++)
                rc |= check_file(files[f], &o);
        }
    }
    free(o.sets);
    free(o.kernels);
    free(files);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        cmd_help(0, NULL);
        return 2;
    }
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (!strcmp(argv[1], commands[i].name)) return commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "xmatune: unknown command '%s'\n", argv[1]);
    cmd_help(0, NULL);
    return 2;
}
