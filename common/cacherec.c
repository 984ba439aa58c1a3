/*
 * cacherec: one record of the on-disk cache, read and written (see cacherec.h).
 */
#include "cacherec.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static int parse_line(yaml_document_t *doc, xmt_cacherec *r)
{
    yaml_node_t *root = yaml_document_get_root_node(doc);
    if (!root || root->type != YAML_MAPPING_NODE) return -1;
    const char *index = field(doc, root, "index");
    const char *label = field(doc, root, "label");
    const char *t = field(doc, root, "time_ms");
    r->device = field(doc, root, "device");
    r->kernel = field(doc, root, "kernel");
    r->entry = field(doc, root, "entry");
    r->key_hex = field(doc, root, "key");
    r->key_text = field(doc, root, "key_text");
    if (!r->device || !r->kernel || !r->entry || !r->key_hex || !index) return -1;
    char *end;
    r->choice.index = strtol(index, &end, 10);
    if (*end || end == index || r->choice.index < XMT_OWN_CONFIG) return -1;
    snprintf(r->choice.label, sizeof r->choice.label, "%s", label ? label : "");
    r->choice.time_ms = t ? strtod(t, NULL) : 0;
    if (!r->key_text) r->key_text = "";
    return 0;
}

int xmt_cacherec_read(const char *path, void (*fn)(void *ud, const xmt_cacherec *r), void *ud)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int bad = 0;
    while ((len = getline(&line, &cap, f)) > 0) {
        if (len == 1 && line[0] == '\n') continue;
        yaml_parser_t parser;
        yaml_document_t doc;
        if (!yaml_parser_initialize(&parser)) {
            bad++;
            continue;
        }
        yaml_parser_set_input_string(&parser, (const unsigned char *)line, (size_t)len);
        if (yaml_parser_load(&parser, &doc)) {
            xmt_cacherec r;
            if (parse_line(&doc, &r) == 0)
                fn(ud, &r);
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

char *xmt_cacherec_format(const xmt_cacherec *r)
{
    json_t *j = json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:s, s:f}", "device", r->device, "kernel",
                          r->kernel, "entry", r->entry, "key", r->key_hex, "key_text", r->key_text,
                          "index", (json_int_t)r->choice.index, "label", r->choice.label, "time_ms",
                          r->choice.time_ms);
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

char *xmt_cacherec_identity(const char *device, const char *kernel, const char *entry,
                            const char *key_hex)
{
    size_t n = strlen(device) + strlen(kernel) + strlen(entry) + strlen(key_hex) + 4;
    char *id = malloc(n);
    if (id) snprintf(id, n, "%s\x1f%s\x1f%s\x1f%s", device, kernel, entry, key_hex);
    return id;
}
