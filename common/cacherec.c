/*
 * cacherec: one record of the on-disk cache, read and written (see cacherec.h).
 */
#include "cacherec.h"

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

/* One record is one line of JSON. It is read with libyaml (JSON's flow syntax is YAML):
 * Debian's static jansson is not position-independent in its loader (it refers to
 * stdin), so the shim links only jansson's writer. Returns 0 and the fields, which point
 * into doc, or -1 when the line is not a record. */
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

static int parse_line(yaml_document_t *doc, const char **device, const char **kernel,
                      const char **entry, const char **key_hex, const char **key_text,
                      xmt_choice *c)
{
    yaml_node_t *root = yaml_document_get_root_node(doc);
    if (!root || root->type != YAML_MAPPING_NODE) return -1;
    const char *index = field(doc, root, "index");
    const char *label = field(doc, root, "label");
    const char *t = field(doc, root, "time_ms");
    *device = field(doc, root, "device");
    *kernel = field(doc, root, "kernel");
    *entry = field(doc, root, "entry");
    *key_hex = field(doc, root, "key");
    *key_text = field(doc, root, "key_text");
    if (!*device || !*kernel || !*entry || !*key_hex || !index) return -1;
    char *end;
    c->index = strtol(index, &end, 10);
    if (*end || c->index < XMT_OWN_CONFIG) return -1;
    snprintf(c->label, sizeof c->label, "%s", label ? label : "");
    c->time_ms = t ? strtod(t, NULL) : 0;
    if (!*key_text) *key_text = "";
    return 0;
}

int xmt_cache_read_file(const char *path,
                        void (*fn)(void *ud, const char *device, const char *kernel,
                                   const char *entry, const char *key_hex, const char *key_text,
                                   const xmt_choice *c),
                        void *ud)
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
            const char *d, *k, *e, *h, *t;
            xmt_choice c;
            if (parse_line(&doc, &d, &k, &e, &h, &t, &c) == 0)
                fn(ud, d, k, e, h, t, &c);
            else
                bad++;
            yaml_document_delete(&doc);
        } else {
            bad++;
        }
        yaml_parser_delete(&parser);
    }
    free(line);
    fclose(f);
    return bad;
}

