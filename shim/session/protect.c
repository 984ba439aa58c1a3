/*
 * protect: from pointer arguments to the regions tuning must protect (see protect.h).
 */
#include "protect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"

#define MAX_PTRS 512

typedef struct {
    CUdeviceptr base;
    size_t bytes;
} span_t;

/* Each parameter's class as the demangled signature gives it (XMT_SIG_*): 1 and cls[]
 * filled when it lists exactly n parameters, else 0 (no signature: extern "C", Triton). */
static int signature_classes(const char *sig, size_t n, uint8_t *cls)
{
    xmt_sig s;
    xmt_sig_param p[XMT_KERNEL_MAX_PARAMS];
    if (n == 0 || n > XMT_KERNEL_MAX_PARAMS ||
        xmt_sig_read(sig, &s, p, XMT_KERNEL_MAX_PARAMS) != (int)n)
        return 0;
    for (size_t i = 0; i < n; i++)
        cls[i] = (uint8_t)p[i].cls;
    return 1;
}

int xmt_protect_driver_knows(CUdeviceptr p, unsigned *type)
{
    unsigned t = 0;
    if (!p || !xmt_drv.cuPointerGetAttribute ||
        xmt_drv.cuPointerGetAttribute(&t, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p) != CUDA_SUCCESS)
        return 0;
    if (type) *type = t;
    return 1;
}

/* Where a pointer value came from, for messages: its parameter, and its byte offset
 * there when it lies inside a by-value struct (XMT_SRC_WHOLE: the parameter itself). */
#define XMT_SRC_WHOLE 0xffffu
typedef struct {
    uint16_t par, off;
} src_t;

static void say_src(char *buf, size_t cap, src_t s, CUdeviceptr p)
{
    if (s.off == XMT_SRC_WHOLE)
        snprintf(buf, cap, "argument 0x%llx", (unsigned long long)p);
    else
        snprintf(buf, cap, "0x%llx (bytes %u-%u of by-value parameter %u)", (unsigned long long)p,
                 (unsigned)s.off, (unsigned)s.off + 7u, (unsigned)s.par);
}

/* why = pre, where p came from, then post; returns -1. Formatted only when a pointer is
 * refused: most keys resolve every pointer, and each would pay for a message unread. */
static int refuse(char *why, size_t cap, src_t src, CUdeviceptr p, const char *pre,
                  const char *post)
{
    char at[96];
    say_src(at, sizeof at, src, p);
    snprintf(why, cap, "%s%s%s", pre, at, post);
    return -1;
}

/* What the driver says about p: 1 device memory (range in *sp), 0 not memory it knows,
 * -1 memory tuning cannot protect (why set). */
static int resolve(CUdeviceptr p, src_t src, size_t limit, span_t *sp, char *why, size_t cap)
{
    unsigned type = 0, managed = 0;
    if (!xmt_protect_driver_knows(p, &type)) return 0;
    if (xmt_drv.cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, p) ==
            CUDA_SUCCESS &&
        managed)
        return refuse(why, cap, src, p, "", " is managed memory");
    if (type != CU_MEMORYTYPE_DEVICE) return refuse(why, cap, src, p, "", " is host memory");
    CUdeviceptr b = 0, rstart = 0;
    size_t s = 0, rsize = 0;
    if (xmt_drv.cuMemGetAddressRange(&b, &s, p) != CUDA_SUCCESS || s == 0)
        return refuse(why, cap, src, p, "", ": the driver gives no allocation range for it");
    /* a virtual reservation larger than the mapped piece: walk the mapped neighbours */
    if (xmt_drv.cuPointerGetAttribute(&rstart, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, p) ==
            CUDA_SUCCESS &&
        xmt_drv.cuPointerGetAttribute(&rsize, CU_POINTER_ATTRIBUTE_RANGE_SIZE, p) == CUDA_SUCCESS &&
        rsize > s) {
        CUdeviceptr nb;
        size_t ns;
        while (b + s < rstart + rsize && s <= limit &&
               xmt_drv.cuMemGetAddressRange(&nb, &ns, b + s) == CUDA_SUCCESS && nb == b + s && ns)
            s += ns;
        while (b > rstart && s <= limit &&
               xmt_drv.cuMemGetAddressRange(&nb, &ns, b - 1) == CUDA_SUCCESS && nb + ns == b &&
               ns) {
            b = nb;
            s += ns;
        }
    }
    sp->base = b;
    sp->bytes = s;
    return 1;
}

static int by_base(const void *x, const void *y)
{
    const span_t *a = x, *b = y;
    return (a->base > b->base) - (a->base < b->base);
}

/* The pointer values to resolve, each with whether it must resolve (declared or typed a
 * pointer by the signature) or is only probed, and where it came from. */
static size_t collect(const xmt_kernel *k, const xmt_launch_view *v, CUdeviceptr *ptrs,
                      uint8_t *must, src_t *src)
{
    size_t n = 0;
    uint32_t par[MAX_PTRS], off[MAX_PTRS];
    uint8_t declared[XMT_KERNEL_MAX_PARAMS] = {0}, cls[XMT_KERNEL_MAX_PARAMS] = {0};
    size_t np = k->nparams < XMT_KERNEL_MAX_PARAMS ? k->nparams : XMT_KERNEL_MAX_PARAMS;
    size_t nd = xmt_entry_pointers(k->entry, par, off, MAX_PTRS);
    for (size_t i = 0; i < nd && i < MAX_PTRS; i++) {
        if (par[i] >= np || off[i] + 8 > k->sizes[par[i]]) continue;
        memcpy(&ptrs[n], (const uint8_t *)v->params[par[i]] + off[i], 8);
        must[n] = 1;
        src[n++] =
            (src_t){(uint16_t)par[i], k->sizes[par[i]] > 8 ? (uint16_t)off[i] : XMT_SRC_WHOLE};
        declared[par[i]] = 1;
    }
    /* A C++ kernel's signature says which parameters are pointers; for a kernel whose name
     * carries no types (extern "C", Triton), every 8-byte parameter not declared a pointer
     * is asked of the driver: a scalar that happens to be a device address only widens
     * what is protected. A struct passed by value (typed so, or any parameter of more
     * than 8 bytes without types) may hold pointers (PyTorch passes its tensors' data
     * pointers in std::array and TensorInfo structs): each of its 8-byte-aligned words is
     * asked too, as the compiler aligns a pointer member to 8 bytes. */
    int typed = signature_classes(k->demangled, np, cls);
    for (size_t i = 0; i < np && n < MAX_PTRS; i++) {
        if (declared[i] || k->sizes[i] < 8) continue;
        int whole = typed ? cls[i] == XMT_SIG_POINTER && k->sizes[i] == 8 : k->sizes[i] == 8;
        int words = typed ? cls[i] == XMT_SIG_STRUCT : k->sizes[i] > 8;
        if (whole) {
            memcpy(&ptrs[n], v->params[i], 8);
            must[n] = (uint8_t)typed;
            src[n++] = (src_t){(uint16_t)i, XMT_SRC_WHOLE};
        } else if (words) {
            for (uint32_t o = 0; o + 8 <= k->sizes[i] && n < MAX_PTRS; o += 8) {
                memcpy(&ptrs[n], (const uint8_t *)v->params[i] + o, 8);
                must[n] = 0;
                src[n++] = (src_t){(uint16_t)i, (uint16_t)o};
            }
        }
    }
    return n;
}

int xmt_protect_find(const xmt_kernel *k, const xmt_launch_view *v, size_t limit, xmt_region **out,
                     size_t *n, size_t *reach, char *why, size_t cap)
{
    CUdeviceptr ptrs[MAX_PTRS];
    uint8_t must[MAX_PTRS];
    src_t src[MAX_PTRS];
    span_t sp[MAX_PTRS] = {{0, 0}};
    size_t np = collect(k, v, ptrs, must, src), ns = 0, total = 0;
    *reach = 0;
    *out = NULL;
    *n = 0;
    for (size_t i = 0; i < np; i++) {
        if (!ptrs[i]) continue;
        int r = resolve(ptrs[i], src[i], limit, &sp[ns], why, cap);
        if (r < 0) return -1;
        if (r == 0 && must[i])
            return refuse(why, cap, src[i], ptrs[i], "pointer ", " is not memory the driver knows");
        if (r == 1) ns++;
    }
    qsort(sp, ns, sizeof *sp, by_base);
    size_t m = 0;
    for (size_t i = 0; i < ns; i++) {
        if (m && sp[i].base < sp[m - 1].base + sp[m - 1].bytes) {
            CUdeviceptr end = sp[i].base + sp[i].bytes;
            if (end > sp[m - 1].base + sp[m - 1].bytes) sp[m - 1].bytes = end - sp[m - 1].base;
        } else {
            sp[m++] = sp[i];
        }
    }
    for (size_t i = 0; i < m; i++)
        total += sp[i].bytes;
    *reach = total;
    if (total > limit) return -2;
    xmt_region *r = calloc(m ? m : 1, sizeof *r);
    if (!r) goto oom;
    *out = r;
    *n = m;
    for (size_t i = 0; i < m; i++) {
        r[i].base = sp[i].base;
        r[i].bytes = sp[i].bytes;
        r[i].nchunks = (sp[i].bytes + ((size_t)1 << XMT_CHUNK_SHIFT) - 1) >> XMT_CHUNK_SHIFT;
        r[i].out = calloc(r[i].nchunks, 1);
        r[i].seen = calloc(r[i].nchunks, 1);
        if (!r[i].out || !r[i].seen) goto oom;
    }
    return 0;
oom:
    xmt_protect_free(*out, *n);
    *out = NULL;
    *n = 0;
    snprintf(why, cap, "out of host memory");
    return -1;
}

void xmt_protect_free(xmt_region *r, size_t n)
{
    for (size_t i = 0; r && i < n; i++) {
        free(r[i].out);
        free(r[i].seen);
    }
    free(r);
}
