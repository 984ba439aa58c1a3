/*
 * report_svg: `xmatune report --svg FILE` and `--html FILE`, a log's tune events drawn
 * as a picture (see report_svg.c).
 */
#ifndef XMT_REPORT_SVG_H
#define XMT_REPORT_SVG_H

#include <jansson.h>

/* The tune events (borrowed) as an SVG file / a self-contained HTML page. Return 0, or 1
 * after saying why the file could not be written. */
int write_report_svg(const char *path, json_t *tunes);
int write_report_html(const char *path, json_t *tunes);

#endif
