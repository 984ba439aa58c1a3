/*
 * options: every XMATUNE_* environment variable, in one table.
 *
 * The table in options.c is the only place a variable is named, parsed, defaulted and
 * documented; the README's table is printed from it (`xmatune options`). Options are
 * read once, when the shim is first asked for a CUDA entry point: never on a launch.
 * A bad value warns once and keeps the default.
 */
#ifndef XMT_OPTIONS_H
#define XMT_OPTIONS_H

#include <stdio.h>

typedef enum {
    XMT_MODE_OFF = 0,  /* pass everything through, wrap nothing */
    XMT_MODE_DISCOVER, /* record kernels and launch shapes, change nothing */
    XMT_MODE_TUNE,     /* benchmark new keys, rewrite launches with the winner */
    XMT_MODE_REPLAY,   /* rewrite with cached winners only, never benchmark */
} xmt_mode;

typedef enum { XMT_STAT_MEDIAN = 0, XMT_STAT_MEAN } xmt_statistic;
typedef enum { XMT_VERIFY_ON_GPU = 0, XMT_VERIFY_ON_HOST } xmt_verify_on;
/* Where candidates run (issue 24: in progress; docs/tuning.md says what holds today). */
/* A tolerance: |a - b| <= atol + rtol * |b|; both 0: bitwise. */
typedef struct {
    double rtol, atol;
} xmt_tol;

typedef enum { XMT_TRIALS_AUTO = 0, XMT_TRIALS_PROCESS, XMT_TRIALS_INLINE } xmt_trials;
typedef enum { XMT_TRUST_GRADED = 0, XMT_TRUST_STRICT } xmt_cache_trust;
typedef enum { XMT_RETUNE_NO = 0, XMT_RETUNE_OUTCOMES, XMT_RETUNE_ALL } xmt_retune;
typedef enum { XMT_TUNING_SYNC = 0, XMT_TUNING_BACKGROUND } xmt_tuning;

#define XMT_PATH_MAX 4096

struct xmt_options {
    int mode;                  /* xmt_mode */
    char policy[XMT_PATH_MAX]; /* file or directory of policies */
    char log[XMT_PATH_MAX];    /* JSON Lines log; %p = pid; empty = none */
    char cache[XMT_PATH_MAX];  /* on-disk cache; %p = pid; "" = default, off */
    char libcuda[XMT_PATH_MAX];
    char cache_remote[1024];                       /* XMATUNE_CACHE_REMOTE: "" = none */
    char cache_remote_password_file[XMT_PATH_MAX]; /* its password's file */
    int cache_remote_timeout_ms;                   /* connect and command timeout */
    int cache_remote_claim_ms;                     /* a remote claim's time to live */
    int verbose;
    int strict;
    int warmup;
    int iterations;
    int race;      /* race candidates (docs/tuning.md, Racing) */
    int statistic; /* xmt_statistic */
    int l2_flush;
    double self_lead_us;    /* below it, a timed run follows a run of its own config */
    double gate_us;         /* below it, a timed round is queued behind a spin kernel */
    double budget_ms;       /* per key, < 0: none */
    double total_budget_ms; /* whole process, < 0: none */
    double warmup_ms;       /* GPU warm-up by time before the first candidate */
    char include[1024];     /* kernel patterns (globs, ',' separated) that may be tuned */
    char exclude[1024];     /* kernel patterns never tuned */
    int max_messages;
    int protect;            /* XMT_PROTECT_* of xmt_policy.h: 0 auto, 1 declared */
    double scratch_mb;      /* < 0: half the free device memory */
    int verify_on;          /* xmt_verify_on */
    int cache_verify;       /* verify a cached winner once before its first use */
    int cache_trust;        /* xmt_cache_trust */
    int retune;             /* xmt_retune */
    int exit_wait_ms;       /* the exit's wait for background verifications */
    int background_queue;   /* keys queued for the background at most */
    int background_share;   /* percent of the time the background may keep the helper busy */
    int tuning;             /* xmt_tuning */
    int rechecks;           /* re-checks of a winner at later launches of its key */
    int cache_lock_wait_ms; /* longest wait for the cache's lock; then no cache */
    int progress;           /* progress lines: 1 on, 0 off, -1 when stderr is a terminal */
    int trials;             /* xmt_trials */
    int trial_timeout_ms;   /* the trial helper's deadline for one answer */
    int trial_spare;        /* a spare helper per device, started ahead of need */
    int autotune;           /* XMATUNE_AUTO: kernels no policy names are tuned too */
    int auto_max_keys;      /* keys per such kernel; past it the kernel passes through */
    double auto_min_us;     /* a kernel auto tunes whose best time is shorter passes through */
    xmt_tol auto_tol;       /* XMATUNE_AUTO_TOLERANCE: derived entries' tolerance: */
};

/* XMATUNE_TOTAL_BUDGET_MS when XMATUNE_AUTO=1 and it is unset. */
#define XMT_AUTO_TOTAL_BUDGET_MS 60000.0

extern struct xmt_options xmt_opt;

/* Reads the environment into xmt_opt. Each bad value is reported through warn(message)
 * (the shim passes its capped xmt_warn; the message has no "xmatune:" prefix), or on
 * stderr when warn is NULL. A second call re-reads: the shim calls it once, at activation.
 * The callback keeps options below log: log reads xmt_opt, options never calls log. */
void xmt_options_load(void (*warn)(const char *msg));

/* Prints the options in effect (XMATUNE_VERBOSE=1), one per line, "xmatune:"-prefixed. */
void xmt_options_print(FILE *out);

/* Prints the table as Markdown (name, default, meaning), for the README. */
void xmt_options_markdown(FILE *out);

const char *xmt_mode_name(int mode);

/* Whether value is one the shim accepts for the variable name, parsed exactly as
 * xmt_options_load parses it, for a tool that sets the variable (xmatune run) to refuse a
 * bad value before the program starts instead of the shim keeping the default. 0 when
 * it is; -1 when not, with what it accepts in ok ("an integer from 1 to 10000"); -2 when
 * no option has that name. xmt_opt is left as it was. */
int xmt_option_check(const char *name, const char *value, char *ok, size_t cap);

/* The i-th option of the table (in its order): name, default as written ("" when empty;
 * NULL for XMATUNE_MODE, whose default its meaning says) and meaning (Markdown: `code`).
 * 0 past the end. For documents made from the table (`xmatune man`). */
int xmt_option_doc(size_t i, const char **name, const char **def, const char **doc);

#endif
