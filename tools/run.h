/*
 * run: `xmatune run`, a program under the shim without typing LD_PRELOAD (see run.c).
 */
#ifndef XMT_RUN_H
#define XMT_RUN_H

int cmd_run(int argc, char **argv);

#endif
