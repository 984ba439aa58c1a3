/*
 * check: `xmatune check`, policy files validated and summarised (see check.c).
 */
#ifndef XMT_CHECK_H
#define XMT_CHECK_H

int cmd_check(int argc, char **argv);

#endif
