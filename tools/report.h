/*
 * report: `xmatune report`, a log as tables (see report.c).
 */
#ifndef XMT_REPORT_H
#define XMT_REPORT_H

int cmd_report(int argc, char **argv);

#endif
