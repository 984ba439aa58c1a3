/* fuzz_policy.c - libFuzzer target for the policy loader and the expression language.
 *
 * The input is loaded as a policy file; every entry that loads is then exercised the way
 * the shim would (match, key, render, candidates, pin, buffers) over arguments taken from
 * the input's own bytes, so that evaluation faults are reached too. A first byte of '='
 * makes the rest a standalone expression instead; a first byte of '~' a kernel name, read
 * by the signature reader (and demangled first when it is mangled). Built by tests/policy/fuzz.sh
 * (or by CMake when the compiler is clang).
 */
#include "xmt_policy.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void quiet(void *ud, const char *msg)
{
    (void)ud;
    (void)msg;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    xmt_attrs at;
    xmt_attrs_default(&at);
    if (size > 0 && data[0] == '=') {
        char *t = malloc(size);
        if (!t) return 0;
        memcpy(t, data + 1, size - 1);
        t[size - 1] = 0;
        xmt_launch_view v = {NULL, 0, {{3, 2, 1}, {128, 1, 1}, 0}, &at};
        double d;
        int64_t i;
        int f;
        char err[256];
        xmt_expr_eval_string(t, &v, &d, &i, &f, err, sizeof err);
        free(t);
        return 0;
    }
    if (size > 0 && data[0] == '~') {
        char *t = malloc(size); /* exactly the name and its NUL: a read past it shows */
        if (!t) return 0;
        memcpy(t, data + 1, size - 1);
        t[size - 1] = 0;
        xmt_sig sg;
        xmt_sig_param ps[8];
        char name[64], sig[4096];
        xmt_sig_read(t, &sg, ps, 8);
        if (xmt_demangle(t, name, sizeof name, sig, sizeof sig) == 1) xmt_sig_read(sig, &sg, ps, 8);
        free(t);
        return 0;
    }
    xmt_policy_set *set = NULL;
    xmt_policy_load_string("fuzz.yaml", (const char *)data, size, &set, quiet, NULL);
    /* argument bytes: the input itself, repeated, 64 bytes per parameter */
    static unsigned char args[128][64];
    void *params[128];
    for (size_t p = 0; p < 128; p++) {
        for (size_t b = 0; b < 64; b++)
            args[p][b] = size ? data[(p * 64 + b) % size] : 0;
        params[p] = args[p];
    }
    for (size_t i = 0; i < xmt_policy_count(set); i++) {
        const xmt_entry *e = xmt_policy_entry(set, i);
        xmt_policy_match(set, "_Z5saxpyifPKfPf", quiet, NULL);
        const xmt_entry *m = xmt_policy_match(set, xmt_entry_pattern(e) + 7, quiet, NULL);
        if (m) e = m;
        size_t np = xmt_entry_nparams(e);
        xmt_launch_view v = {params, np, {{7, 3, 1}, {96, 2, 1}, 100}, &at};
        uint8_t key[XMT_KEY_MAX];
        char buf[512];
        size_t kl = xmt_entry_key(e, &v, key, sizeof key);
        if (kl) xmt_entry_key_render(e, key, kl, buf, sizeof buf);
        size_t nc = xmt_entry_ncandidates(e);
        for (size_t c = 0; c < nc && c < 64; c++) {
            xmt_candidate cand;
            xmt_entry_candidate(e, c, &v, &cand);
        }
        xmt_candidate pin;
        xmt_entry_pin(e, &v, &pin);
        for (size_t b = 0; b < xmt_entry_nbuffers(e); b++) {
            xmt_buffer buf2;
            xmt_entry_buffer(e, b, &v, &buf2);
        }
        size_t sizes[128], offs[128];
        for (size_t p = 0; p < 128; p++)
            sizes[p] = 8, offs[p] = 8 * p;
        xmt_entry_check_layout(e, np, offs, sizes, buf, sizeof buf);
        xmt_entry_describe(e, buf, sizeof buf);
    }
    xmt_policy_free(set);
    return 0;
}
