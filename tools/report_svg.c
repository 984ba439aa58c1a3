/*
 * report_svg: `xmatune report LOG --svg FILE` and `--html FILE`, the tunings of a log as a
 * picture drawn here (no plotting library). One panel per tuned key: a row per candidate,
 * the program's own config first; a timed candidate is a bar of its median with a
 * whisker from its fastest to its slowest timed run, on one scale per panel; the winner
 * is drawn in its own colour and marked; rejected and skipped candidates are rows of
 * text saying so and why. Under the title: how long the tuning took, against the time
 * its timed runs took (the least it could have taken) or the log's `floor_ms` when it
 * has one.
 *
 * Every candidate's mark carries class "cand" plus its status ("ok", "winner",
 * "rejected", "skipped") and data-config (its label), so that a test can read the picture.
 * The HTML page is self-contained: the same SVG inline, and a table of the tunings.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "logevent.h"
#include "report_svg.h"
#include "xmt_policy.h"

#define W 960       /* picture width */
#define LABEL_W 330 /* candidate labels */
#define BAR_W 440   /* the longest bar */
#define ROW_H 18
#define HEAD_H 46 /* a panel's title lines */

/* Writes s with XML's special characters escaped. */
static void xml_text(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '&')
            fputs("&amp;", f);
        else if (*s == '<')
            fputs("&lt;", f);
        else if (*s == '>')
            fputs("&gt;", f);
        else if (*s == '"')
            fputs("&quot;", f);
        else
            fputc(*s, f);
    }
}

static const char *str(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

/* The candidate's statistic (median, else mean) and the range of its timed runs; -1
 * when it was not timed. */
static double stat_of(json_t *c, double *lo, double *hi)
{
    json_t *m = json_object_get(c, XMT_F_MEDIAN_MS);
    if (!json_is_number(m)) m = json_object_get(c, XMT_F_MEAN_MS);
    double v = json_is_number(m) ? json_number_value(m) : -1;
    *lo = *hi = v;
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(c, XMT_F_TIMES_MS), i, t)
    {
        double x = json_number_value(t);
        if (x < *lo) *lo = x;
        if (x > *hi) *hi = x;
    }
    return v;
}

/* The rows of one tuning: the program's own config, then every candidate. */
static size_t panel_rows(json_t *e)
{
    return 1 + json_array_size(json_object_get(e, XMT_F_CANDIDATES));
}

static double sum_times(json_t *c)
{
    double s = 0;
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(c, XMT_F_TIMES_MS), i, t) s += json_number_value(t);
    return s;
}

static void fmt_ms(char *buf, size_t cap, double ms)
{
    if (ms < 1)
        snprintf(buf, cap, "%.1f µs", ms * 1000);
    else
        snprintf(buf, cap, "%.3f ms", ms);
}

/* A panel's time axis: linear from 0, or logarithmic from a tenth of the fastest time
 * when the times span more than 20x (so that a 400x speed-up still shows both bars). */
typedef struct {
    double max, lmin, lspan;
    int log;
} axis;

static double px(const axis *a, double v)
{
    if (a->max <= 0 || v <= 0) return 0;
    if (!a->log) return BAR_W * v / a->max;
    return BAR_W * (log(v) - a->lmin) / a->lspan;
}

/* One row: label, then a bar and whisker, or the status and why. */
static void row(FILE *f, json_t *c, const char *label, int winner, const axis *ax, double y)
{
    const char *st = str(c, XMT_F_STATUS);
    double lo, hi, v = stat_of(c, &lo, &hi);
    int timed = v >= 0 && (!*st || !strcmp(st, "ok"));
    const char *cls = winner ? "winner" : timed ? "ok" : *st ? st : "ok";
    fprintf(f, "<text x=\"8\" y=\"%.1f\" class=\"label\">", y + 13);
    xml_text(f, label);
    fputs("</text>\n", f);
    if (!timed) {
        fprintf(f, "<text x=\"%d\" y=\"%.1f\" class=\"cand %s\" data-config=\"", LABEL_W, y + 13,
                cls);
        xml_text(f, label);
        fprintf(f, "\">%s", *st ? st : "not timed");
        const char *why = str(c, XMT_F_WHY);
        if (*why) {
            /* a long reason is cut to fit the picture; the whole of it is the tooltip */
            char cut[80];
            size_t n = strlen(why);
            if (n >= sizeof cut) /* at a character's start: never half of a UTF-8 one */
                for (n = sizeof cut - 1; n > 0 && ((unsigned char)why[n] & 0xC0) == 0x80;)
                    n--;
            snprintf(cut, sizeof cut, "%.*s", (int)n, why);
            fputs(": ", f);
            xml_text(f, cut);
            if (strlen(why) >= sizeof cut) {
                fputs("…<title>", f);
                xml_text(f, why);
                fputs("</title>", f);
            }
        }
        fputs(winner ? "  ★ winner (nothing else valid)</text>\n" : "</text>\n", f);
        return;
    }
    char t[32];
    fmt_ms(t, sizeof t, v);
    fprintf(f,
            "<rect x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" class=\"cand %s\" "
            "data-config=\"",
            LABEL_W, y + 3, px(ax, v) > 1 ? px(ax, v) : 1, ROW_H - 6, cls);
    xml_text(f, label);
    fprintf(f, "\" data-median-ms=\"%g\"/>\n", v);
    fprintf(f,
            "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" class=\"spread\"/>\n"
            "<text x=\"%.1f\" y=\"%.1f\" class=\"time\">%s%s</text>\n",
            LABEL_W + px(ax, lo), LABEL_W + px(ax, hi), y + ROW_H / 2.0, y + ROW_H / 2.0,
            LABEL_W + px(ax, hi) + 6, y + 13, t, winner ? "  ★ winner" : "");
}

/* One panel at y; returns its height. */
static double panel(FILE *f, json_t *e, double y)
{
    json_t *own = json_object_get(e, XMT_F_OWN), *win = json_object_get(e, XMT_F_WINNER);
    json_t *cands = json_object_get(e, XMT_F_CANDIDATES);
    long long wi = json_integer_value(json_object_get(win, XMT_F_INDEX));
    double max = 0, min = 0, lo, hi, timed = sum_times(own);
    if (stat_of(own, &lo, &hi) >= 0) {
        max = hi;
        min = lo;
    }
    size_t i;
    json_t *c;
    json_array_foreach(cands, i, c)
    {
        timed += sum_times(c);
        if (stat_of(c, &lo, &hi) >= 0) {
            if (hi > max) max = hi;
            if (lo > 0 && (min <= 0 || lo < min)) min = lo;
        }
    }
    axis ax = {max, 0, 1, min > 0 && max / min > 20};
    if (ax.log) {
        ax.lmin = log(min / 10);
        ax.lspan = log(max) - ax.lmin;
    }
    char name[256];
    xmt_sig_name(str(e, XMT_F_NAME), name, sizeof name);
    fprintf(f, "<g class=\"panel\" data-key=\"");
    xml_text(f, str(e, XMT_F_KEY));
    fprintf(f, "\">\n<text x=\"8\" y=\"%.1f\" class=\"title\">", y + 16);
    xml_text(f, name);
    fputs(" — ", f);
    xml_text(f, str(e, XMT_F_KEY));
    fputs("</text>\n", f);
    char d[32], t[32], fl[32];
    fmt_ms(d, sizeof d, json_number_value(json_object_get(e, XMT_F_DURATION_MS)));
    fmt_ms(t, sizeof t, timed);
    json_t *floor = json_object_get(e, XMT_F_FLOOR_MS);
    if (json_is_number(floor)) fmt_ms(fl, sizeof fl, json_number_value(floor));
    fprintf(
        f, "<text x=\"8\" y=\"%.1f\" class=\"sub\">tuning took %s; %s %s%s%s; %s</text>\n", y + 34,
        d, json_is_number(floor) ? "floor" : "its timed runs", json_is_number(floor) ? fl : t,
        json_is_true(json_object_get(e, XMT_F_TOLERANCE)) ? "; verified within a tolerance" : "",
        json_object_get(e, XMT_F_ERROR) ? "; stopped by an error (see the log)" : "",
        json_is_false(json_object_get(e, XMT_F_BENCHMARKED)) ? "verified, not timed"
        : ax.log ? "bars: median, whiskers: range, log scale"
                 : "bars: median, whiskers: range");
    double yy = y + HEAD_H;
    row(f, own, "program's own config", wi == -1, &ax, yy);
    yy += ROW_H;
    json_array_foreach(cands, i, c)
    {
        long long ci = json_integer_value(json_object_get(c, XMT_F_INDEX));
        row(f, c, str(c, XMT_F_CONFIG), wi != -1 && ci == wi, &ax, yy);
        yy += ROW_H;
    }
    fputs("</g>\n", f);
    return HEAD_H + (double)panel_rows(e) * ROW_H + 14;
}

/* The SVG document (no XML declaration: it is also inlined in the HTML page). */
static void svg(FILE *f, json_t *tunes)
{
    double h = 40;
    size_t i;
    json_t *e;
    json_array_foreach(tunes, i, e) h += HEAD_H + (double)panel_rows(e) * ROW_H + 14;
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%.0f\" "
            "viewBox=\"0 0 %d %.0f\" font-family=\"DejaVu Sans, Arial, sans-serif\" "
            "font-size=\"12\">\n<style>"
            ".title{font-weight:bold;font-size:14px} .sub{fill:#555} .label{fill:#222} "
            ".ok{fill:#7a9cc6} .winner{fill:#d9822b} .rejected{fill:#b03a2e} "
            ".skipped{fill:#888;font-style:italic} .spread{stroke:#222;stroke-width:1.5} "
            ".time{fill:#222}</style>\n"
            "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%.0f\" fill=\"#ffffff\"/>\n"
            "<text x=\"8\" y=\"24\" class=\"title\">xmatune: %zu tuning%s</text>\n",
            W, h, W, h, W, h, json_array_size(tunes), json_array_size(tunes) == 1 ? "" : "s");
    double y = 40;
    json_array_foreach(tunes, i, e) y += panel(f, e, y);
    fputs("</svg>\n", f);
}

int write_report_svg(const char *path, json_t *tunes)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return 1;
    }
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
    svg(f, tunes);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        perror(path);
        return 1;
    }
    return 0;
}

int write_report_html(const char *path, json_t *tunes)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return 1;
    }
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
          "<title>xmatune report</title>\n<style>body{font-family:sans-serif;margin:2em} "
          "table{border-collapse:collapse} td,th{border:1px solid #ccc;padding:2px 8px;"
          "text-align:left}</style></head>\n<body>\n<h1>xmatune report</h1>\n",
          f);
    fputs("<table><tr><th>kernel</th><th>key</th><th>winner</th><th>its time</th>"
          "<th>program's own time</th><th>candidates</th></tr>\n",
          f);
    size_t i;
    json_t *e;
    json_array_foreach(tunes, i, e)
    {
        json_t *own = json_object_get(e, XMT_F_OWN), *win = json_object_get(e, XMT_F_WINNER);
        double lo, hi, to = stat_of(own, &lo, &hi), tw = stat_of(win, &lo, &hi);
        char a[32] = "—", b[32] = "—", name[256];
        if (to >= 0) fmt_ms(a, sizeof a, to);
        if (tw >= 0) fmt_ms(b, sizeof b, tw);
        xmt_sig_name(str(e, XMT_F_NAME), name, sizeof name);
        fputs("<tr><td>", f);
        xml_text(f, name);
        fputs("</td><td>", f);
        xml_text(f, str(e, XMT_F_KEY));
        fputs("</td><td>", f);
        xml_text(f, json_integer_value(json_object_get(win, XMT_F_INDEX)) == -1
                        ? "program's own"
                        : str(win, XMT_F_CONFIG));
        fprintf(f, "</td><td>%s</td><td>%s</td><td>%zu</td></tr>\n", b, a,
                json_array_size(json_object_get(e, XMT_F_CANDIDATES)));
    }
    fputs("</table>\n", f);
    svg(f, tunes);
    fputs("</body></html>\n", f);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        perror(path);
        return 1;
    }
    return 0;
}
