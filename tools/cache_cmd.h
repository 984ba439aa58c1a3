/*
 * cache_cmd: `xmatune cache` (list, show, prune, clear, export, import; see cache_cmd.c).
 */
#ifndef XMT_CACHE_CMD_H
#define XMT_CACHE_CMD_H

int cmd_cache(int argc, char **argv);

#endif
