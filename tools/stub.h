/*
 * stub: the policy skeleton of `xmatune discover --stub FILE`, and the policy of
 * `xmatune autotune --write-policy FILE` (see stub.c).
 */
#ifndef XMT_STUB_H
#define XMT_STUB_H

#include <jansson.h>
#include <stdio.h>

/* Writes the skeleton for a log's kernel and kernel_summary events (borrowed). */
void write_policy_stub(FILE *f, json_t *kernels, json_t *summaries);

/* Writes, for each kernel of the log's kernel events whose tune events (borrowed) show an
 * idiom auto derived winning, the entry that reproduces it: that idiom's configs (the
 * policy library's xmt_derive_entry), with what auto did per key as comments. Returns how
 * many entries it wrote. */
size_t write_auto_policy(FILE *f, json_t *kernels, json_t *tunes);

#endif
