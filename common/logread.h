/*
 * logread: the tools' reader of the JSON log (docs/log.md, names in logevent.h): a JSON
 * Lines file line by line, and the one collector that sorts its events by kind. It uses
 * jansson's loader, which must never be linked into the shim (Debian's libjansson.a
 * load.o is not PIC; docs/architecture.md): it lives in libxmtcommon_tools.a, which only
 * the xmatune command and the tests link. The test shim_links_no_json_loader checks it.
 */
#ifndef XMT_LOGREAD_H
#define XMT_LOGREAD_H

#include <jansson.h>

#include "logevent.h"

/* Calls fn for every line of a JSON Lines file (the object is borrowed). Returns how many
 * lines were not JSON or were refused by fn (non-zero), or -1, having said why, when the
 * file cannot be opened. */
int xmt_log_read(const char *path, int (*fn)(json_t *e, void *ud), void *ud);

/* The events of a log by kind: each event whose lists[kind] is an array is appended to it
 * (the caller makes the arrays it wants and owns them; NULL: not kept). Returns what
 * xmt_log_read returns. */
int xmt_log_collect(const char *path, json_t *lists[XMT_EV_COUNT]);

#endif
