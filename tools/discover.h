/*
 * discover: `xmatune discover`, a program run in discover mode, its report and policy skeleton (see
 * discover.c).
 */
#ifndef XMT_DISCOVER_H
#define XMT_DISCOVER_H

int cmd_discover(int argc, char **argv);

#endif
