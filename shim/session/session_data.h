/*
 * session_data: the data a session runs on -- the declared buffers evaluated and
 * snapshot before anything runs; under protect: auto the regions the pointer arguments
 * reach (protect.c; in the trial helper, those staged for it) with their snapshot and
 * reference scratch; the program's own config's outputs (outputs.c: which chunks it
 * writes, whole or in place, and whether it repeats its result); the data check (a
 * reference that repeats one value proves nothing: docs/tuning.md, "Data that proves
 * nothing"); and the digest of the data the winner was verified on.
 */
#ifndef XMT_SESSION_DATA_H
#define XMT_SESSION_DATA_H

#include "session_types.h"

/* Buffers: evaluate each declared one and snapshot it before anything runs; the regions
 * of auto protection; and the L2 flush buffer when flushing is on. Returns 0, 1
 * untuned, -1 failure. */
int xmt_sess_buffers(xmt_session *S);

/* The program's own config again, from poisoned outputs: those it gives back it writes
 * whole; the others it updates in place, and they are restored instead of poisoned before
 * each verify run from then on (and own_repeats may ask, after the candidates, whether it
 * repeats its result). Asked only when something needs the answer: a candidate's run from
 * outputs all poisoned that differs from the reference (check_candidate; one that gives
 * the reference from there shows that nothing had to be restored, so a key whose
 * candidates all pass never runs it), data that repeats one value (data_check), or, in a
 * helper, a candidate that faulted from outputs all poisoned in an earlier helper (it may
 * have read the poison). Returns 0, 1 untuned, -1 failure. */
int xmt_sess_in_place_check(xmt_session *S);

/* Outputs: the program's own config run on the snapshot; the chunks it changed are its
 * outputs, and what it left is the reference. Until in_place_check says otherwise, every
 * output counts as written whole (poisoned before each verify run). Returns 0, 1
 * untuned, -1 failure. */
int xmt_sess_outputs(xmt_session *S);

/* Outputs updated in place (auto), once every candidate is verified: when one was
 * rejected and none gave the reference, does the program's own config give it again
 * from the same data? A config that does not repeat its own result cannot be verified
 * against: the key is untuned, and says why, rather than reporting every candidate
 * wrong. A candidate that gives the reference shows as much, so this run (one of the
 * own config, the slowest, in every in-place key) is saved there. 0, 1 untuned, -1. */
int xmt_sess_own_repeats(xmt_session *S);

/* Auto protection, once the outputs and the reference are known: the reference proves
 * nothing (S->out.uninformative) when the launch reads memory and every judged run of what
 * it reads and of what it wrote repeats one value (zeros in, zeros out): a wrong config
 * can give the same answer there. Compared on the GPU. 0, 1 untuned (in_place_check),
 * or -1 on failure. */
int xmt_sess_data_check(xmt_session *S);

/* S->out.data_digest: a digest of the reference the candidates were compared with, so that
 * a record on disk says which data its winner was verified on: each output run (auto) or
 * declared verify buffer, its place and size and its first and last DIGEST_SAMPLE bytes,
 * at most DIGEST_RUNS of them (a bounded cost whatever the size). The runs' hashes are
 * combined in sorted order: regions are ordered by address, and another process (or
 * another allocator's layout) may lay the same buffers out in another order. 0, or -1. */
int xmt_sess_data_digest(xmt_session *S);

#endif
