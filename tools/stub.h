/*
 * stub: the policy skeleton of `xmatune discover --stub FILE` (see stub.c).
 */
#ifndef XMT_STUB_H
#define XMT_STUB_H

#include <jansson.h>
#include <stdio.h>

/* Writes the skeleton for a log's kernel and kernel_summary events (borrowed). */
void write_policy_stub(FILE *f, json_t *kernels, json_t *summaries);

#endif
