/*
 * report_svg: `xmatune report LOG --svg FILE` and `--html FILE`, the tunings of a log as a
 * picture drawn here (no plotting library). One panel per tuned key: a row per candidate,
 * the program's own config first; a timed candidate is a bar of its median with a
 * whisker from its fastest to its slowest timed run, on one scale per panel, drawn as an
 * axis under it (log when the times span more than 20x); the program's own config and the
 * winner are drawn in colours of their own and the winner marked; rejected and skipped
 * candidates are rows of text saying so and why, the whole reason wrapped within the
 * picture, never cut; skipped configs of one reason are one row, with their count; a
 * candidate racing timed no more is drawn paler, with the round it went out after. A
 * legend under the picture's title names the colours. Under each panel's title: how long
 * the tuning took, against the time its timed runs took (the least it could have taken)
 * or the log's `floor_ms` when it has one, and the speed-up; a key decided from the cache
 * says so ("from the cache, verified, not timed"), in the picture's title too.
 *
 * Every candidate's mark carries class "cand" plus its status ("ok", "winner",
 * "rejected", "skipped"; the program's own config also "own"; one racing timed no more also
 * "eliminated") and data-config (its label), so that a test can read the picture; a folded
 * row of skipped configs has data-count and data-configs (their labels, "; "-separated). The HTML
 * page is self-contained: the same SVG inline, and a table of the tunings.
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
#define BAR_W 380   /* the longest bar: room after it for its time and marks */
#define ROW_H 18
#define HEAD_H 62 /* a panel's title lines */
#define AXIS_H 22 /* a panel's time axis */
#define TOP_H 60  /* the picture's title and legend */
/* A reason's lines are wrapped (never cut) to what fits from where they start to the
 * right edge, at CHAR_PX a character: DejaVu Sans at 12 px averages under 7 px. */
#define CHAR_PX 7.2
#define WHY_MAX 160 /* the longest line, in bytes, whatever the width */

/* How many characters fit from x to the picture's right edge (8 px margin). */
static size_t fits(double x)
{
    double n = (W - 8 - x) / CHAR_PX;
    return n < 16 ? 16 : n > WHY_MAX ? WHY_MAX : (size_t)n;
}

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

/* Where a reason's line ends: at most max bytes, at a space when there is one, never
 * inside a UTF-8 character. */
static size_t why_line(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n <= max) return n;
    size_t cut = max;
    while (cut > max / 2 && s[cut] != ' ')
        cut--;
    if (s[cut] != ' ')
        for (cut = max; cut > 0 && ((unsigned char)s[cut] & 0xC0) == 0x80;)
            cut--;
    return cut;
}

/* The first line's room: from the row's status text ("rejected: ") on. */
static size_t why_first(const char *st)
{
    size_t room = fits(LABEL_W), used = strlen(st) + 2;
    return room > used + 16 ? room - used : 16;
}

/* The lines a reason takes after its first (which shares the row). */
static size_t why_extra_lines(const char *st, const char *why)
{
    size_t n = 0, first = why_line(why, why_first(st));
    for (const char *p = why + first; *p;) {
        while (*p == ' ')
            p++;
        if (!*p) break;
        p += why_line(p, fits(LABEL_W + 12));
        n++;
    }
    return n;
}

/* A row's lines: 1, plus a long reason's continuation lines. */
static size_t row_lines(json_t *c)
{
    const char *st = json_string_value(json_object_get(c, XMT_F_STATUS));
    const char *why = json_string_value(json_object_get(c, XMT_F_WHY));
    if (!st || !strcmp(st, "ok") || !why) return 1;
    return 1 + why_extra_lines(st, why);
}

/* Skipped configs for one reason (a condition false for most of a space under auto) are
 * one row: candidate i's row is folded into an earlier one's when that is skipped for the
 * same reason (1), else it stands (0), with *count the configs it stands for. */
static int folded(json_t *cands, size_t i, size_t *count)
{
    json_t *c = json_array_get(cands, i);
    const char *st = str(c, XMT_F_STATUS), *why = str(c, XMT_F_WHY);
    *count = 1;
    if (strcmp(st, "skipped") != 0) return 0;
    for (size_t j = 0; j < i; j++) {
        json_t *d = json_array_get(cands, j);
        if (!strcmp(str(d, XMT_F_STATUS), "skipped") && !strcmp(str(d, XMT_F_WHY), why)) return 1;
    }
    for (size_t j = i + 1; j < json_array_size(cands); j++) {
        json_t *d = json_array_get(cands, j);
        *count += !strcmp(str(d, XMT_F_STATUS), "skipped") && !strcmp(str(d, XMT_F_WHY), why);
    }
    return 0;
}

/* The rows of one tuning, in lines: the program's own config, then every candidate's row
 * (folded ones apart). */
static size_t panel_rows(json_t *e)
{
    size_t n = 1, i, count;
    json_t *c, *cands = json_object_get(e, XMT_F_CANDIDATES);
    json_array_foreach(cands, i, c) if (!folded(cands, i, &count)) n += row_lines(c);
    return n;
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

/* What a winner's row says when it was not timed: how it was decided. */
static const char *untimed_winner(json_t *e, int own)
{
    if (json_is_true(json_object_get(e, XMT_F_FROM_CACHE)))
        return "  ★ winner (from the cache, verified, not timed)";
    if (own) return "  ★ winner (no other config passed)";
    return "  ★ winner (verified, not timed)";
}

/* One row: label, then a bar and whisker, or the status and why (the whole of it, wrapped
 * on lines of its own). own: the program's own config, in a colour of its own. folded
 * (skipped configs of one reason): the other candidates of cands the row stands for, the
 * label then their count; 1 for a row of its own. */
static void row(FILE *f, json_t *e, json_t *c, const char *label, int winner, int own,
                const axis *ax, double y, json_t *cands, size_t count)
{
    const char *st = str(c, XMT_F_STATUS);
    double lo, hi, v = stat_of(c, &lo, &hi);
    int timed = v >= 0 && (!*st || !strcmp(st, "ok"));
    char cls[32];
    snprintf(cls, sizeof cls, "%s%s",
             winner  ? "winner"
             : timed ? "ok"
             : *st   ? st
                     : "ok",
             own ? " own" : "");
    int eliminated = timed && json_is_object(json_object_get(c, XMT_F_ELIMINATED));
    if (eliminated) strcat(cls, " eliminated");
    fprintf(f, "<text x=\"8\" y=\"%.1f\" class=\"label\">", y + 13);
    if (count > 1)
        fprintf(f, "%zu configs", count);
    else
        xml_text(f, label);
    fputs("</text>\n", f);
    if (!timed) {
        fprintf(f, "<text x=\"%d\" y=\"%.1f\" class=\"cand %s\" data-config=\"", LABEL_W, y + 13,
                cls);
        xml_text(f, label);
        if (count > 1) { /* every config the row stands for */
            fprintf(f, "\" data-count=\"%zu\" data-configs=\"", count);
            const char *why0 = str(c, XMT_F_WHY);
            size_t i, k = 0;
            json_t *d;
            json_array_foreach(cands, i, d) if (!strcmp(str(d, XMT_F_STATUS), "skipped") &&
                                                !strcmp(str(d, XMT_F_WHY), why0))
            {
                fputs(k++ ? "; " : "", f);
                xml_text(f, str(d, XMT_F_CONFIG));
            }
        }
        fprintf(f, "\">%s", *st ? st : "not timed");
        const char *why = str(c, XMT_F_WHY);
        size_t n = why_line(why, why_first(*st ? st : "not timed"));
        char part[WHY_MAX + 1];
        if (*why) {
            snprintf(part, sizeof part, "%.*s", (int)n, why);
            fputs(": ", f);
            xml_text(f, part);
        }
        fputs(winner ? untimed_winner(e, own) : "", f);
        fputs("</text>\n", f);
        for (const char *p = why + n; *p;) { /* the rest, wrapped: never cut */
            while (*p == ' ')
                p++;
            if (!*p) break;
            n = why_line(p, fits(LABEL_W + 12));
            snprintf(part, sizeof part, "%.*s", (int)n, p);
            y += ROW_H;
            fprintf(f, "<text x=\"%d\" y=\"%.1f\" class=\"why %s\">", LABEL_W + 12, y + 13, st);
            xml_text(f, part);
            fputs("</text>\n", f);
            p += n;
        }
        return;
    }
    char t[32], out[48] = "";
    fmt_ms(t, sizeof t, v);
    if (eliminated)
        snprintf(
            out, sizeof out, ", raced out after round %lld",
            json_integer_value(json_object_get(json_object_get(c, XMT_F_ELIMINATED), XMT_F_ROUND)));
    fprintf(f,
            "<rect x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" class=\"cand %s\" "
            "data-config=\"",
            LABEL_W, y + 3, px(ax, v) > 1 ? px(ax, v) : 1, ROW_H - 6, cls);
    xml_text(f, label);
    fprintf(f, "\" data-median-ms=\"%g\"/>\n", v);
    fprintf(f,
            "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" class=\"spread\"/>\n"
            "<text x=\"%.1f\" y=\"%.1f\" class=\"time\">%s%s%s</text>\n",
            LABEL_W + px(ax, lo), LABEL_W + px(ax, hi), y + ROW_H / 2.0, y + ROW_H / 2.0,
            LABEL_W + px(ax, hi) + 6, y + 13, t, winner ? "  ★ winner" : "", out);
}

/* A panel's height: title, rows, axis. */
static double panel_height(json_t *e)
{
    return HEAD_H + (double)panel_rows(e) * ROW_H + AXIS_H + 14;
}

/* The time axis under a panel's bars at y: ticks with their times, a linear scale from 0
 * or, when the times span more than 20x, one tick per power of ten (log scale), so that
 * the bars' lengths can be read. */
static void draw_axis(FILE *f, const axis *ax, double y)
{
    if (ax->max <= 0) return;
    fprintf(f,
            "<g class=\"axis\"><line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" "
            "class=\"tick\"/>\n",
            LABEL_W, LABEL_W + BAR_W, y + 2, y + 2);
    double ticks[16];
    int n = 0;
    if (ax->log) {
        for (int e = (int)ceil(ax->lmin / log(10)); e <= (int)floor(log10(ax->max)) && n < 16; e++)
            ticks[n++] = pow(10, e);
    } else {
        for (int i = 0; i <= 4; i++)
            ticks[n++] = ax->max * i / 4;
    }
    for (int i = 0; i < n; i++) {
        double x = LABEL_W + px(ax, ticks[i]);
        char t[32];
        fmt_ms(t, sizeof t, ticks[i]);
        if (ticks[i] == 0) snprintf(t, sizeof t, "0");
        fprintf(
            f,
            "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" class=\"tick\"/>"
            "<text x=\"%.1f\" y=\"%.1f\" class=\"axis-label\" text-anchor=\"middle\">%s</text>\n",
            x, x, y + 2, y + 6, x, y + 17, t);
    }
    fprintf(f, "<text x=\"%d\" y=\"%.1f\" class=\"axis-label\" text-anchor=\"end\">%s</text></g>\n",
            LABEL_W - 14, y + 17, ax->log ? "time (log scale)" : "time");
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
    int cached = json_is_true(json_object_get(e, XMT_F_FROM_CACHE));
    /* the speed-up in words: a bar's length on a log scale does not say it */
    double wlo, whi, to = stat_of(own, &wlo, &whi), tw = stat_of(win, &wlo, &whi);
    char speed[64] = "";
    if (wi != -1 && to > 0 && tw > 0)
        snprintf(speed, sizeof speed, "; speed-up %.2f× over the program's own config", to / tw);
    const char *tol =
        json_is_true(json_object_get(e, XMT_F_TOLERANCE)) ? "; verified within a tolerance" : "";
    const char *err = json_object_get(e, XMT_F_ERROR) ? "; stopped by an error, see the log" : "";
    if (cached) /* no tuning here: a winner tuned before, checked against the own config */
        fprintf(f,
                "<text x=\"8\" y=\"%.1f\" class=\"sub\">from the cache, verified, not timed: "
                "the check took %s%s%s</text>\n",
                y + 34, d, tol, err);
    else
        fprintf(f, "<text x=\"8\" y=\"%.1f\" class=\"sub\">tuning took %s; %s %s%s%s%s</text>\n",
                y + 34, d, json_is_number(floor) ? "floor" : "its timed runs",
                json_is_number(floor) ? fl : t,
                json_is_number(floor) ? " (the GPU time of its measurements alone)" : "", tol, err);
    fprintf(f, "<text x=\"8\" y=\"%.1f\" class=\"sub\">%s%s</text>\n", y + 50,
            cached ? "its winner was tuned by an earlier process and verified here"
            : json_is_false(json_object_get(e, XMT_F_BENCHMARKED)) ? "verified, not timed"
            : ax.log ? "bars: median, whiskers: range, on a log scale (see the axis)"
                     : "bars: median, whiskers: range",
            speed);
    double yy = y + HEAD_H;
    row(f, e, own, "program's own config", wi == -1, 1, &ax, yy, cands, 1);
    yy += ROW_H;
    json_array_foreach(cands, i, c)
    {
        long long ci = json_integer_value(json_object_get(c, XMT_F_INDEX));
        size_t count;
        if (folded(cands, i, &count)) continue;
        row(f, e, c, str(c, XMT_F_CONFIG), wi != -1 && ci == wi, 0, &ax, yy, cands, count);
        yy += (double)row_lines(c) * ROW_H;
    }
    if (!json_is_false(json_object_get(e, XMT_F_BENCHMARKED))) draw_axis(f, &ax, yy);
    fputs("</g>\n", f);
    return panel_height(e);
}

/* The colours' legend, one line at y: a swatch (a bar, or a word in its style) and its
 * meaning each. */
static void legend(FILE *f, double y)
{
    static const struct {
        const char *cls, *text;
        int bar;
    } keys[] = {{"own", "program's own config", 1},
                {"winner", "winner", 1},
                {"ok", "timed", 1},
                {"ok eliminated", "raced out: timed no more", 1},
                {"rejected", "rejected: its results differ", 0},
                {"skipped", "skipped", 0}};
    double x = 8;
    fputs("<g class=\"legend\">\n", f);
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        if (keys[i].bar) {
            fprintf(f,
                    "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"10\" class=\"%s\"/>"
                    "<text x=\"%.1f\" y=\"%.1f\" class=\"label\">%s</text>\n",
                    x, y - 9, keys[i].cls, x + 18, y, keys[i].text);
            x += 18 + (double)strlen(keys[i].text) * 6.4 + 16;
        } else {
            fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"%s\">%s</text>\n", x, y, keys[i].cls,
                    keys[i].text);
            x += (double)strlen(keys[i].text) * 6.4 + 16;
        }
    }
    fputs("</g>\n", f);
}

/* The SVG document (no XML declaration: it is also inlined in the HTML page). */
static void svg(FILE *f, json_t *tunes)
{
    double h = TOP_H;
    size_t i, ncached = 0, n = json_array_size(tunes);
    json_t *e;
    json_array_foreach(tunes, i, e)
    {
        h += panel_height(e);
        ncached += json_is_true(json_object_get(e, XMT_F_FROM_CACHE));
    }
    /* a replay's keys were not tuned: its title must not call them tunings */
    char title[160];
    if (!ncached)
        snprintf(title, sizeof title, "%zu tuning%s", n, n == 1 ? "" : "s");
    else if (ncached == n)
        snprintf(title, sizeof title, "%zu key%s, from the cache, verified, not timed", n,
                 n == 1 ? "" : "s");
    else
        snprintf(title, sizeof title,
                 "%zu keys: %zu tuned, %zu from the cache, verified, not timed", n, n - ncached,
                 ncached);
    fprintf(
        f,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%.0f\" "
        "viewBox=\"0 0 %d %.0f\" font-family=\"DejaVu Sans, Arial, sans-serif\" "
        "font-size=\"12\">\n<style>"
        ".title{font-weight:bold;font-size:14px} .sub{fill:#555} .label{fill:#222} "
        ".ok{fill:#7a9cc6} .own{fill:#4f9a5e} .winner{fill:#d9822b} .rejected{fill:#b03a2e} "
        ".eliminated{fill-opacity:0.4} "
        ".why{fill:#555} .tick{stroke:#555;stroke-width:1} .axis-label{fill:#555;font-size:10px} "
        ".skipped{fill:#888;font-style:italic} .spread{stroke:#222;stroke-width:1.5} "
        ".time{fill:#222}</style>\n"
        "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%.0f\" fill=\"#ffffff\"/>\n"
        "<text x=\"8\" y=\"24\" class=\"title\">xmatune: ",
        W, h, W, h, W, h);
    xml_text(f, title);
    fputs("</text>\n", f);
    legend(f, 44);
    double y = TOP_H;
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
