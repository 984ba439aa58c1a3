/*
 * autotune_cmd: `xmatune autotune [--write-policy FILE] -- PROGRAM`, a program tuned with
 * no policy (XMATUNE_AUTO=1), then the report of its log and, with --write-policy, the
 * policy entries that reproduce what auto did (see autotune_cmd.c).
 */
#ifndef XMT_AUTOTUNE_CMD_H
#define XMT_AUTOTUNE_CMD_H

int cmd_autotune(int argc, char **argv);

#endif
