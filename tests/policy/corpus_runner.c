/* corpus_runner.c - runs the malformed-policy corpus: every *.yaml in a directory must
 * fail to load with the message its "# expect: LINE:COL: message" lines give (each must
 * appear, as "file:LINE:COL: message"), and no file may load without error. With
 * --valid, every file must instead load cleanly with at least one entry (the examples).
 */
#include "xmt_policy.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIN_CORPUS 50

static char diags[65536];

static void cap_diag(void *ud, const char *m)
{
    (void)ud;
    size_t n = strlen(diags);
    snprintf(diags + n, sizeof diags - n, "%s\n", m);
}

static int cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int check_file(const char *path, int valid)
{
    xmt_policy_set *set = NULL;
    diags[0] = 0;
    int nerr = xmt_policy_load(path, &set, cap_diag, NULL);
    size_t count = xmt_policy_count(set);
    xmt_policy_free(set);
    if (valid) {
        if (nerr || count == 0) {
            printf("FAIL %s: %d errors, %zu entries\n%s", path, nerr, count, diags);
            return 1;
        }
        return 0;
    }
    if (nerr == 0) {
        printf("FAIL %s: loaded without error\n", path);
        return 1;
    }
    FILE *f = fopen(path, "r");
    if (!f) {
        printf("FAIL %s: cannot reopen\n", path);
        return 1;
    }
    char line[1024];
    int nexpect = 0, bad = 0;
    while (fgets(line, sizeof line, f)) {
        const char *tag = "# expect: ";
        if (strncmp(line, tag, strlen(tag)) != 0) continue;
        char *want = line + strlen(tag);
        want[strcspn(want, "\r\n")] = 0;
        char full[2048];
        snprintf(full, sizeof full, "%s:%s", path, want);
        nexpect++;
        if (!strstr(diags, full)) {
            printf("FAIL %s: expected\n  %s\ngot\n%s", path, full, diags);
            bad = 1;
        }
    }
    fclose(f);
    if (!nexpect) {
        printf("FAIL %s: no '# expect:' line\n", path);
        return 1;
    }
    return bad;
}

int main(int argc, char **argv)
{
    int valid = argc > 1 && !strcmp(argv[1], "--valid");
    if (argc != 2 + valid) {
        fprintf(stderr, "usage: %s [--valid] DIR\n", argv[0]);
        return 2;
    }
    const char *dir = argv[1 + valid];
    DIR *d = opendir(dir);
    if (!d) {
        perror(dir);
        return 2;
    }
    char **names = NULL;
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t l = strlen(de->d_name);
        if (l < 6 || strcmp(de->d_name + l - 5, ".yaml")) continue;
        char **nn = realloc(names, (n + 1) * sizeof *nn);
        if (!nn) return 2;
        names = nn;
        size_t pl = strlen(dir) + l + 2;
        names[n] = malloc(pl);
        if (!names[n]) return 2;
        snprintf(names[n++], pl, "%s/%s", dir, de->d_name);
    }
    closedir(d);
    if (n) qsort(names, n, sizeof *names, cmp);
    int fails = 0;
    for (size_t i = 0; i < n; i++) {
        fails += check_file(names[i], valid);
        free(names[i]);
    }
    free(names);
    printf("%zu files, %d failed\n", n, fails);
    if (!valid && n < MIN_CORPUS) {
        printf("FAIL: the corpus has %zu files, fewer than %d\n", n, MIN_CORPUS);
        return 1;
    }
    return fails ? 1 : 0;
}
