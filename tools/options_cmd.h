/*
 * options_cmd: `xmatune options`, the XMATUNE_* variables as a Markdown table (see options_cmd.c).
 */
#ifndef XMT_OPTIONS_CMD_H
#define XMT_OPTIONS_CMD_H

int cmd_options(int argc, char **argv);

#endif
