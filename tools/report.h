/*
 * report: `xmatune report`, a log as tables (see report.c).
 */
#ifndef XMT_REPORT_H
#define XMT_REPORT_H

#include <stddef.h>

/* s for a Markdown table cell in buf: '|' escaped (device strings and causes hold them),
 * cut to what fits. Returns buf. */
const char *xmt_md_cell(const char *s, char *buf, size_t cap);
int cmd_report(int argc, char **argv);

#endif
