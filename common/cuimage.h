/*
 * cuimage: a CUDA module image's format and size, from its bytes alone.
 *
 * The load entry points (cuModuleLoadData, cuModuleLoadDataEx, cuLibraryLoadData, ...)
 * take an image and no size: the driver reads as much as the format says. To hand a
 * program's module to the trial helper the shim must do the same: a fatbin wrapper (what
 * nvcc's runtime passes; it points at the fatbin), a fatbin (header + its declared size),
 * an ELF cubin (as far as its headers and sections reach), or PTX (text up to its NUL).
 * CUDA-free, so that it is unit-tested on crafted and real images.
 */
#ifndef XMT_CUIMAGE_H
#define XMT_CUIMAGE_H

#include <stddef.h>

typedef enum {
    XMT_IMAGE_UNKNOWN = 0,
    XMT_IMAGE_FATBIN_WRAPPER, /* __fatBinC_Wrapper_t: magic 0x466243b1, then the fatbin */
    XMT_IMAGE_FATBIN,         /* magic 0xBA55ED50: header size + fat size */
    XMT_IMAGE_ELF,            /* a cubin: ELF64 */
    XMT_IMAGE_TEXT,           /* PTX or any NUL-terminated text */
} xmt_image_format;

/* Where an image's bytes are: *bytes (for a wrapper, the fatbin it points to) and *size.
 * limit bounds how far the image may reach (a hostile header must not make the caller
 * read the whole address space): an image that would be larger is XMT_IMAGE_UNKNOWN.
 * Returns the format; UNKNOWN with *bytes NULL and *size 0 when the bytes make no sense. */
xmt_image_format xmt_image_locate(const void *image, size_t limit, const void **bytes,
                                  size_t *size);

/* "fatbin wrapper", "fatbin", "ELF", "text", "unknown". */
const char *xmt_image_format_name(xmt_image_format f);

#endif
