/*
 * cacherec: the on-disk cache's record format, the one reader and the one writer that
 * the shim (shim/records/cache.c) and `xmatune cache` share.
 */
#ifndef XMT_CACHEREC_H
#define XMT_CACHEREC_H

#include <stddef.h>
#include <stdint.h>

#define XMT_OWN_CONFIG (-1) /* the winner is the program's own launch configuration */

typedef struct {
    long index;      /* candidate index, or XMT_OWN_CONFIG */
    char label[160]; /* the candidate's label when it won */
    double time_ms;  /* its measured time */
    /* The digest of the data it was verified on (16 hex digits, docs/cache.md), or "":
     * none known (an older record, or a choice made without a verification). Not part of
     * what a verification checks (the choice's index and label). */
    char data[17];
    /* How the key was decided, when not by timing its candidates (docs/cache.md, "Every
     * outcome"): "" (a tuning's winner, or the program's own config timed fastest), else one
     * of the XMT_OUTCOME_* words, with index XMT_OWN_CONFIG; why: its reason for people. */
    char outcome[24];
    char why[200];
    /* Where the record came from: "" (a process of the file's own, which verified it), or
     * "import" (xmatune cache import): a record of another origin is a hint (docs/cache.md,
     * "Trust"). */
    char origin[16];
    int rechecked; /* re-checks on later data it passed in the process that stored it */
    /* The re-checks the process that stored a winner would have made at its later launches on
     * other data (its XMATUNE_RECHECKS; 0: none, or a record written before this field): one
     * that failed would have written the key's record again. docs/cache.md, Trust. */
    int rechecks;
    /* The candidates that faulted or hung in the trial helper at this key, their indices
     * separated by spaces ("0 35"; "" none, or a record written before this field): a later
     * process skips their fault families at the kernel's other keys (docs/tuning.md, "Fault
     * families"). A value of anything but digits and single spaces reads as "". */
    char faults[96];
    /* A partial record's (outcome "partial"): the candidates its cut session had decided cannot
     * win (rejected by verification, or stopped by racing), indices as faults has them; the
     * next session skips them (docs/tuning.md, "Resuming a session cut at exit"). "" none, or
     * a record written before this field; a value not of that shape reads as "". */
    char decided[400];
} xmt_choice;

/* The outcomes a record may carry besides a timed decision (xmt_choice.outcome). */
#define XMT_OUTCOME_UNTOLD "untold"     /* its launches' data never told configs apart */
#define XMT_OUTCOME_DECLINED "declined" /* it cannot be tuned where candidates may run */
#define XMT_OUTCOME_FAULTED "faulted"   /* too many candidates (or its own) faulted or hung */
#define XMT_OUTCOME_UNTUNED "untuned"   /* its session could not decide (why says why) */
#define XMT_OUTCOME_FAILED "failed"     /* a cached winner failed its verification here */
#define XMT_OUTCOME_UNSTABLE "nondeterministic" /* its own config's results vary by run */
/* a session the exit cut: never a winner, only the next session's input (its decided) */
#define XMT_OUTCOME_PARTIAL "partial"

/* A choice that keeps the program's own config for a reason worth remembering: *c becomes
 * the program's own config with that outcome (XMT_OUTCOME_*) and why, cut at a character boundary
 * to the record's room. */
void xmt_choice_outcome(xmt_choice *c, const char *outcome, const char *why);

/* Lower-case hex of key[0..len) into out (2 * len + 1 bytes). */
void xmt_cacherec_hex(const uint8_t *key, size_t len, char *out);

/* The record format's version, in every record ("v"). Records of another version are
 * dropped and counted apart: older ones (a record without a version, or with one that is
 * not a number, is older), and newer ones (written by a later xmatune), so that messages
 * say which. A "v" that is neither a string nor an integer (a fraction, an exponent, more
 * digits than a version has, true, null) makes the line no record at all. */
#define XMT_CACHEREC_VERSION 2
typedef struct {
    int older, newer;
} xmt_cacherec_other;

/* The longest line that may be a record (a key of 512 bytes is 1 KiB of hex): longer
 * ones are skipped unparsed, so that no line can make the parser work for long. */
#define XMT_CACHEREC_MAX_LINE 16384

/* One record. The strings point into the reader's document (valid during the callback
 * only) or, for the writer, into the caller's memory. Its identity is everything but
 * key_text and the choice: a record replaces earlier ones of the same identity. */
typedef struct {
    const char *device;   /* device model and driver ("NVIDIA H200|cc9.0|sm132|drv13000") */
    const char *kernel;   /* mangled kernel name */
    const char *code;     /* the kernel code's fingerprint: layout and attributes, hex */
    const char *entry;    /* the policy entry's pattern */
    const char *entry_fp; /* the fingerprint of what the entry says, hex */
    const char *key_hex;  /* the binary lookup key, in hex */
    const char *key_text; /* the key for people ("" when absent) */
    xmt_choice choice;
    const char *raw; /* the reader's: the line as it is in the file, without '\n' */
    size_t raw_len;
    uint64_t offset; /* the reader's: the file offset of the line's first byte */
} xmt_cacherec;

/* Reads a cache file from fd (read from where it is), one record per line, calling fn
 * for each valid one in file order (later lines win: that is the caller's to apply).
 * Blank lines are ignored; a record of another format version is skipped and counted
 * in *old (older or newer; when old is not NULL); any other line that is not a record (not a JSON
 * object, a required field missing or of the wrong JSON type (text fields are strings,
 * v and index numbers), an index below -1, longer than the cap) is skipped
 * and counted. Returns that count, -1 and errno when reading fails. A last line without
 * '\n' (a killed writer's) is read as any other. xmt_cacherec_read opens path itself: -1
 * when it cannot. The parser is this module's own (a flat JSON object, one pass in place,
 * ~0.2 us a record on the development VM, the writer's own lines fastest): jansson's loader is not
 * linked into the shim (Debian's static one is not position-independent) and libyaml's documents
 * cost ~7 us a line. */
int xmt_cacherec_read(const char *path, void (*fn)(void *ud, const xmt_cacherec *r), void *ud,
                      xmt_cacherec_other *old);
int xmt_cacherec_read_fd(int fd, void (*fn)(void *ud, const xmt_cacherec *r), void *ud,
                         xmt_cacherec_other *old);

/* As xmt_cacherec_read_fd, from file offset *pos (pread: the descriptor's offset is left
 * alone); *pos becomes the offset after the last '\n' read, so that reading again from it
 * reads only what was appended since (a partial last line is read again then). */
int xmt_cacherec_read_at(int fd, uint64_t *pos, void (*fn)(void *ud, const xmt_cacherec *r),
                         void *ud, xmt_cacherec_other *old);

/* One line (without its '\n', at most XMT_CACHEREC_MAX_LINE bytes) as a record, the way
 * the reader reads each line: 0 a record (*r, its strings in scratch; raw is line, offset
 * 0), 1 a record of an older format version, 2 of a newer one, -1 not a record. scratch holds
 * XMT_CACHEREC_SCRATCH(len) bytes. For a reader that keeps where records are, not what they
 * say (the shim's cache), to read one again. */
#define XMT_CACHEREC_SCRATCH(len) (2 * (size_t)(len) + 16)
int xmt_cacherec_parse(const char *line, size_t len, char *scratch, xmt_cacherec *r);

/* The record as one line of compact JSON ending in '\n', malloc'd; NULL when out of
 * memory. One write(2) of it with O_APPEND never tears against other processes. */
char *xmt_cacherec_format(const xmt_cacherec *r);

/* The identity a record replaces earlier ones of: device, kernel, code, entry, entry_fp
 * and key joined with \x1f (a byte none of them holds), malloc'd; NULL when out of
 * memory. */
char *xmt_cacherec_identity(const xmt_cacherec *r);

#endif
