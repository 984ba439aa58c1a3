/*
 * graph: CUDA graphs. Kernel nodes get known winners; replays are counted.
 *
 * A kernel node of a kernel a policy names, added or set (cuGraphAddKernelNode,
 * cuGraphKernelNodeSetParams, cuGraphExecKernelNodeSetParams; parameter structs _v1 and
 * _v2, a CUkernel in `kern` included) with arguments whose key already has a winner — in
 * memory, a pin, or in the on-disk cache — gets the winner's grid, block, shared memory
 * and `args:`, exactly as a direct launch with those arguments would (tuner.c decides,
 * launch.c applies). Nothing is ever benchmarked or verified for a node: a node run
 * alone would see memory that the graph's upstream nodes have not written yet. A node
 * whose key has no winner keeps the program's configuration, is counted as untuned, and
 * its key gets one `graph_node` event in the log. If the driver refuses the winner's
 * node, the program's own parameters are given to it instead.
 *
 * Replays: when an executable graph is made (cuGraphInstantiate*, and again at
 * cuGraphExecUpdate) its kernel nodes are found once — child graphs walked, to a depth
 * of 16 — and kept per CUgraphExec as (kernel, device, nodes); a successful
 * cuGraphLaunch then costs one lock-free lookup by CUgraphExec and one atomic increment.
 * The counts reach the kernels (launches made by replays, apart from direct launches)
 * when the executable graph is updated or destroyed, and at exit. Conditional nodes'
 * bodies are not walked (the driver has no call that returns them from a node): such
 * graphs are counted without them and said to be so. Every call passes through as made
 * when the shim's own graph queries fail.
 */
#ifndef XMT_GRAPH_H
#define XMT_GRAPH_H

#include <cuda.h>

/* The wrappers' bodies (hook.c): real is the driver's pointer, ver the node-parameter
 * struct's version (1: CUDA_KERNEL_NODE_PARAMS_v1, 2: _v2). */
CUresult xmt_graph_add_node(void *real, int ver, CUgraphNode *ph, CUgraph g,
                            const CUgraphNode *deps, size_t ndeps, const void *params);
CUresult xmt_graph_set_node(void *real, int ver, CUgraphNode n, const void *params);
CUresult xmt_graph_exec_set_node(void *real, int ver, CUgraphExec x, CUgraphNode n,
                                 const void *params);
/* After an instantiation or update the driver accepted (r): (re)walks g for x. */
CUresult xmt_graph_instantiated(CUresult r, CUgraphExec *px, CUgraph g);
CUresult xmt_graph_updated(CUresult r, CUgraphExec x, CUgraph g);
CUresult xmt_graph_launch(void *real, CUgraphExec x, CUstream s);
CUresult xmt_graph_exec_destroy(void *real, CUgraphExec x);

/* At exit, before the report: every live executable graph's replays go to its kernels. */
void xmt_graph_flush(void);

/* fork(2) handler for the module's locks (shim.c's fork_phase). */
void xmt_graph_atfork(int phase);

/* Replays of executable graphs the shim never saw made, and graphs with conditional
 * nodes (their bodies not counted): for the exit line. */
void xmt_graph_totals(unsigned long long *replays, unsigned long long *unseen,
                      unsigned long long *conditional);

#endif
