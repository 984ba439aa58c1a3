/*
 * cuimage: a CUDA module image's format and size (see cuimage.h).
 */
#include "cuimage.h"

#include <stdint.h>
#include <string.h>

#define WRAPPER_MAGIC 0x466243b1u
#define FATBIN_MAGIC 0xBA55ED50u

/* fatbinary.h's header: magic, version, header size, then the size of what follows. */
typedef struct {
    uint32_t magic;
    uint16_t version;
    uint16_t header_size;
    uint64_t fat_size;
} fatbin_header;

/* __fatBinC_Wrapper_t, as nvcc emits it. */
typedef struct {
    int32_t magic;
    int32_t version;
    const void *data;
    const void *filename_or_fatbins;
} fatbin_wrapper;

static uint64_t rd64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static uint32_t rd32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static uint16_t rd16(const unsigned char *p)
{
    uint16_t v;
    memcpy(&v, p, 2);
    return v;
}

static size_t fatbin_size(const unsigned char *p, size_t limit)
{
    fatbin_header h;
    memcpy(&h, p, sizeof h);
    if (h.magic != FATBIN_MAGIC || h.header_size < sizeof h) return 0;
    if (h.fat_size > limit || h.header_size > limit - h.fat_size) return 0;
    return (size_t)h.header_size + (size_t)h.fat_size;
}

/* An ELF64 little-endian image reaches as far as its program headers, its section headers
 * and every section with contents in the file. */
static size_t elf_size(const unsigned char *p, size_t limit)
{
    if (p[4] != 2 || p[5] != 1) return 0; /* ELFCLASS64, ELFDATA2LSB */
    uint64_t phoff = rd64(p + 0x20), shoff = rd64(p + 0x28);
    uint16_t ehsize = rd16(p + 0x34), phentsize = rd16(p + 0x36), phnum = rd16(p + 0x38);
    uint16_t shentsize = rd16(p + 0x3A), shnum = rd16(p + 0x3C);
    uint64_t end = ehsize >= 0x40 ? ehsize : 0x40;
    if (phnum) {
        if (phentsize < 0x38 || phoff > limit || (uint64_t)phnum * phentsize > limit - phoff)
            return 0;
        uint64_t e = phoff + (uint64_t)phnum * phentsize;
        for (unsigned i = 0; i < phnum; i++) {
            const unsigned char *ph = p + phoff + (uint64_t)i * phentsize;
            uint64_t off = rd64(ph + 0x08), filesz = rd64(ph + 0x20);
            if (off > limit || filesz > limit - off) return 0;
            if (off + filesz > e) e = off + filesz;
        }
        if (e > end) end = e;
    }
    if (shnum) {
        if (shentsize < 0x40 || shoff > limit || (uint64_t)shnum * shentsize > limit - shoff)
            return 0;
        uint64_t e = shoff + (uint64_t)shnum * shentsize;
        for (unsigned i = 0; i < shnum; i++) {
            const unsigned char *sh = p + shoff + (uint64_t)i * shentsize;
            uint32_t type = rd32(sh + 0x04);
            uint64_t off = rd64(sh + 0x18), size = rd64(sh + 0x20);
            if (type == 8 /* SHT_NOBITS */ || type == 0 /* SHT_NULL */) continue;
            if (off > limit || size > limit - off) return 0;
            if (off + size > e) e = off + size;
        }
        if (e > end) end = e;
    }
    return end <= limit ? (size_t)end : 0;
}

xmt_image_format xmt_image_locate(const void *image, size_t limit, const void **bytes, size_t *size)
{
    *bytes = NULL;
    *size = 0;
    if (!image || limit < 4) return XMT_IMAGE_UNKNOWN;
    const unsigned char *p = image;
    uint32_t magic = rd32(p);
    if (magic == WRAPPER_MAGIC && limit >= sizeof(fatbin_wrapper)) {
        fatbin_wrapper w;
        memcpy(&w, p, sizeof w);
        /* the fatbin it points at is another object: its own limit is the caller's */
        if (!w.data || rd32(w.data) != FATBIN_MAGIC) return XMT_IMAGE_UNKNOWN;
        size_t n = fatbin_size(w.data, limit);
        if (!n) return XMT_IMAGE_UNKNOWN;
        *bytes = w.data;
        *size = n;
        return XMT_IMAGE_FATBIN_WRAPPER;
    }
    if (magic == FATBIN_MAGIC && limit >= sizeof(fatbin_header)) {
        size_t n = fatbin_size(p, limit);
        if (!n) return XMT_IMAGE_UNKNOWN;
        *bytes = p;
        *size = n;
        return XMT_IMAGE_FATBIN;
    }
    if (memcmp(p,
               "\x7f"
               "ELF",
               4) == 0) {
        size_t n = limit >= 0x40 ? elf_size(p, limit) : 0;
        if (!n) return XMT_IMAGE_UNKNOWN;
        *bytes = p;
        *size = n;
        return XMT_IMAGE_ELF;
    }
    const void *nul = memchr(p, 0, limit);
    if (!nul) return XMT_IMAGE_UNKNOWN;
    *bytes = p;
    *size = (size_t)((const unsigned char *)nul - p) + 1;
    return XMT_IMAGE_TEXT;
}

const char *xmt_image_format_name(xmt_image_format f)
{
    switch (f) {
    case XMT_IMAGE_FATBIN_WRAPPER: return "fatbin wrapper";
    case XMT_IMAGE_FATBIN: return "fatbin";
    case XMT_IMAGE_ELF: return "ELF";
    case XMT_IMAGE_TEXT: return "text";
    case XMT_IMAGE_UNKNOWN: break;
    }
    return "unknown";
}
