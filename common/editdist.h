/*
 * editdist: the one edit distance behind every "did you mean" (a mistyped XMATUNE_*
 * variable in options.c, an unknown policy key in policy/load_yaml.c). Header-only, so that
 * the policy library, which links nothing of common/, shares it too.
 */
#ifndef XMT_EDITDIST_H
#define XMT_EDITDIST_H

#include <string.h>

/* The edit distance (insertions, deletions, substitutions) of a and b, or cap + 1 when it
 * is larger than cap: only small distances name a likely typo, so long strings (over 64
 * bytes) and lengths further apart than cap stop early. */
static inline size_t xmt_edit_distance(const char *a, const char *b, size_t cap)
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

#endif
