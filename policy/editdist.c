/*
 * editdist: the one edit distance behind every "did you mean" (an unknown policy key in
 * load_yaml.c; a mistyped XMATUNE_* variable in common/options.c, which may use this
 * library's public header). Declared in xmt_policy.h.
 */
#include <string.h>

#include "xmt_policy.h"

size_t xmt_edit_distance(const char *a, const char *b, size_t cap)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64) return cap + 1;
    if ((la > lb ? la - lb : lb - la) > cap) return cap + 1;
    size_t row[65];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb] <= cap ? row[lb] : cap + 1;
}
