/*
 * cacherec: one record of the on-disk cache, read and written (see cacherec.h).
 */
#include "cacherec.h"

#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yaml.h>

void xmt_cacherec_hex(const uint8_t *key, size_t len, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < len; i++) {
        out[2 * i] = digits[key[i] >> 4];
        out[2 * i + 1] = digits[key[i] & 15];
    }
    out[2 * len] = 0;
}

static const char *field(yaml_document_t *doc, yaml_node_t *map, const char *name)
{
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = yaml_document_get_node(doc, p->key);
        yaml_node_t *v = yaml_document_get_node(doc, p->value);
        if (k && v && k->type == YAML_SCALAR_NODE && v->type == YAML_SCALAR_NODE &&
            strcmp((const char *)k->data.scalar.value, name) == 0)
            return (const char *)v->data.scalar.value;
    }
    return NULL;
}

/* 0 a record, -1 not a record, 1 a record of another format version. */
static int parse_line(yaml_document_t *doc, xmt_cacherec *r)
{
    yaml_node_t *root = yaml_document_get_root_node(doc);
    if (!root || root->type != YAML_MAPPING_NODE) return -1;
    const char *v = field(doc, root, "v");
    if (!v || strtol(v, NULL, 10) != XMT_CACHEREC_VERSION)
        return field(doc, root, "device") ? 1 : -1;
    const char *index = field(doc, root, "index");
    const char *label = field(doc, root, "label");
    const char *t = field(doc, root, "time_ms");
    r->device = field(doc, root, "device");
    r->kernel = field(doc, root, "kernel");
    r->code = field(doc, root, "code");
    r->entry = field(doc, root, "entry");
    r->entry_fp = field(doc, root, "entry_fp");
    r->key_hex = field(doc, root, "key");
    r->key_text = field(doc, root, "key_text");
    if (!r->device || !r->kernel || !r->code || !r->entry || !r->entry_fp || !r->key_hex || !index)
        return -1;
    char *end;
    r->choice.index = strtol(index, &end, 10);
    if (*end || end == index || r->choice.index < XMT_OWN_CONFIG) return -1;
    snprintf(r->choice.label, sizeof r->choice.label, "%s", label ? label : "");
    r->choice.time_ms = t ? strtod(t, NULL) : 0;
    if (!r->key_text) r->key_text = "";
    return 0;
}

int xmt_cacherec_read_fd(int fd, void (*fn)(void *ud, const xmt_cacherec *r), void *ud, int *old)
{
    int dup_fd = dup(fd);
    FILE *f = dup_fd >= 0 ? fdopen(dup_fd, "r") : NULL;
    if (!f) {
        if (dup_fd >= 0) close(dup_fd);
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int bad = 0;
    if (old) *old = 0;
    while ((len = getline(&line, &cap, f)) > 0) {
        if (len == 1 && line[0] == '\n') continue;
        if (len > XMT_CACHEREC_MAX_LINE) { /* no record is that long: not parsed at all */
            bad++;
            continue;
        }
        yaml_parser_t parser;
        yaml_document_t doc;
        if (!yaml_parser_initialize(&parser)) {
            bad++;
            continue;
        }
        yaml_parser_set_input_string(&parser, (const unsigned char *)line, (size_t)len);
        if (yaml_parser_load(&parser, &doc)) {
            xmt_cacherec r;
            int k = parse_line(&doc, &r);
            if (k == 0)
                fn(ud, &r);
            else if (k == 1 && old)
                ++*old;
            else
                bad++;
            yaml_document_delete(&doc);
        } else {
            bad++;
        }
        yaml_parser_delete(&parser);
    }
    free(line);
    (void)fclose(f); /* read only */
    return bad;
}

int xmt_cacherec_read(const char *path, void (*fn)(void *ud, const xmt_cacherec *r), void *ud,
                      int *old)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return -1;
    int bad = xmt_cacherec_read_fd(fd, fn, ud, old);
    close(fd);
    return bad;
}

char *xmt_cacherec_format(const xmt_cacherec *r)
{
    json_t *j = json_pack("{s:i, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:s, s:f}", "v",
                          XMT_CACHEREC_VERSION, "device", r->device, "kernel", r->kernel, "code",
                          r->code, "entry", r->entry, "entry_fp", r->entry_fp, "key", r->key_hex,
                          "key_text", r->key_text, "index", (json_int_t)r->choice.index, "label",
                          r->choice.label, "time_ms", r->choice.time_ms);
    char *text = j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(j);
    if (!text) return NULL;
    size_t len = strlen(text);
    char *line = realloc(text, len + 2);
    if (!line) {
        free(text);
        return NULL;
    }
    line[len] = '\n';
    line[len + 1] = 0;
    return line;
}

char *xmt_cacherec_identity(const xmt_cacherec *r)
{
    const char *f[6] = {r->device, r->kernel, r->code, r->entry, r->entry_fp, r->key_hex};
    size_t n = 6;
    for (int i = 0; i < 6; i++)
        n += strlen(f[i]);
    char *id = malloc(n);
    if (id) snprintf(id, n, "%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s", f[0], f[1], f[2], f[3], f[4], f[5]);
    return id;
}
