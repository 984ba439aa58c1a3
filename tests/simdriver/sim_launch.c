/* sim_launch.c: modules, libraries, function/kernel handles, launches, cuGetProcAddress.
 *
 * A module holds the kernels its image names (a "simcuda-image v1" header) or, by
 * default, every kernel; the cuLink* calls merge such images.
 * Handles are addresses inside fixed pools, so a stale or foreign handle can be
 * recognised without dereferencing freed memory, and a module loaded after an unload
 * takes the lowest free slot and hands out the very same handle values (the real
 * driver reuses handles too; the shim must cope). A CUfunction and a CUkernel of the
 * same kernel are different addresses, and only the cuKernel* calls accept the
 * latter, as on the real driver -- except launches and attributes, which take both. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "sim_internal.h"
#include "simcuda.h"

#define MAX_MODS 64
#define FUNC_MAGIC 0x46554e43u
#define KERN_MAGIC 0x4b45524eu

/* Per-kernel settings a program can change (shared by a library's CUkernel and the
 * CUfunction that cuKernelGetFunction gives for it). */
typedef struct {
    int max_dyn;  /* CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES */
    int carveout; /* CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT */
    int nonportable_cluster;
} simattrs;

typedef struct simmod simmod;
typedef struct {
    uint32_t magic;
    simmod *mod;
    const simk_def *k;
    simattrs *attrs;
} simfunc;

struct simmod {
    int live;
    uintptr_t coef;              /* its global sim_coef: one float, 1.0 at load */
    unsigned char has[SIMK_MAX]; /* the kernels its image holds */
    simattrs attrs[SIMK_MAX];
    simfunc funcs[SIMK_MAX];
    simfunc kerns[SIMK_MAX]; /* libraries only */
};

static simmod g_mods[MAX_MODS]; /* cuModuleLoad* */
static simmod g_libs[MAX_MODS]; /* cuLibraryLoad* */
/* Each library's CUmodule in the context (cuLibraryGetModule, and cuFuncGetModule of the
 * CUfunction cuKernelGetFunction gives): a handle of its own, not the library's, as on
 * the real driver. Only its address is used. */
static char g_libmods[MAX_MODS];

/* The function or kernel a handle points at, if it is one of a loaded module's. */
static simfunc *handle_locked(const void *h, uint32_t magic)
{
    simmod *pools[2] = {g_mods, g_libs};
    uintptr_t p = (uintptr_t)h;
    for (int i = 0; i < 2; i++) {
        uintptr_t lo = (uintptr_t)pools[i], hi = (uintptr_t)(pools[i] + MAX_MODS);
        if (p < lo || p >= hi) continue;
        simmod *m = &pools[i][(p - lo) / sizeof(simmod)];
        simfunc *arr = magic == FUNC_MAGIC ? m->funcs : m->kerns;
        uintptr_t a = (uintptr_t)arr;
        if (p < a || p >= (uintptr_t)(arr + SIMK_MAX) || (p - a) % sizeof(simfunc)) return NULL;
        simfunc *f = (simfunc *)h;
        return m->live && f->magic == magic ? f : NULL;
    }
    return NULL;
}
/* A CUfunction, or a CUkernel cast to one: what launches and attribute calls take. */
static simfunc *any_handle_locked(const void *h)
{
    simfunc *f = handle_locked(h, FUNC_MAGIC);
    return f ? f : handle_locked(h, KERN_MAGIC);
}

static simmod *module_locked(const void *h)
{
    for (int i = 0; i < MAX_MODS; i++) {
        if (h == &g_mods[i] && g_mods[i].live) return &g_mods[i];
        if (h == &g_libs[i] && g_libs[i].live) return &g_libs[i];
    }
    return NULL;
}

/* Whether m (a slot of g_mods or g_libs) is a library. */
static int is_library(const simmod *m)
{
    return m >= g_libs && m < g_libs + MAX_MODS;
}

/* The library whose CUmodule h is (g_libmods), else what module_locked says. */
static simmod *as_module_locked(const void *h)
{
    uintptr_t p = (uintptr_t)h, lo = (uintptr_t)g_libmods;
    if (p >= lo && p < lo + MAX_MODS) {
        simmod *l = &g_libs[p - lo];
        return l->live ? l : NULL;
    }
    return module_locked(h);
}

/* The CUmodule a module or library answers to (a library's: its g_libmods slot). */
static CUmodule module_handle(simmod *m)
{
    if (is_library(m)) return (CUmodule)&g_libmods[m - g_libs];
    return (CUmodule)m;
}

/* ---------------------------------------------------------------- images
 * An image that begins with SIM_IMAGE_MAGIC names the kernels it holds, one mangled name
 * a line, up to an empty line or the end of the text; anything else holds every kernel.
 * So the kernels a module holds are a function of its image's bytes alone: a second
 * process loading the same bytes gets the same kernels. */
#define SIM_IMAGE_MAGIC "simcuda-image v1\n"
#define SIM_IMAGE_MAX 65536

/* Fills has[] from a NUL-terminated image: every kernel when it has no header. Returns
 * CUDA_ERROR_INVALID_IMAGE when the header names a kernel the driver does not have. */
static CUresult image_kernels(const char *img, unsigned char has[SIMK_MAX])
{
    size_t ml = strlen(SIM_IMAGE_MAGIC);
    memset(has, strncmp(img, SIM_IMAGE_MAGIC, ml) != 0, SIMK_MAX);
    if (has[0]) return CUDA_SUCCESS;
    for (const char *p = img + ml; *p && *p != '\n';) {
        size_t n = strcspn(p, "\r\n");
        char name[128];
        if (n >= sizeof name) return CUDA_ERROR_INVALID_IMAGE;
        memcpy(name, p, n);
        name[n] = '\0';
        const simk_def *d = simk_find(name);
        if (!d) return CUDA_ERROR_INVALID_IMAGE;
        has[d - simk_get(0)] = 1;
        p += n;
        if (*p == '\r') p++;
        if (*p == '\n') p++;
    }
    return CUDA_SUCCESS;
}

/* The kernels of bytes[0, n) (not NUL-terminated). */
static CUresult image_kernels_n(const void *bytes, size_t n, unsigned char has[SIMK_MAX])
{
    if (n > SIM_IMAGE_MAX) n = SIM_IMAGE_MAX; /* a header is short; the rest is payload */
    char *t = malloc(n + 1);
    if (!t) return CUDA_ERROR_OUT_OF_MEMORY;
    memcpy(t, bytes, n);
    t[n] = '\0';
    CUresult rc = image_kernels(t, has);
    free(t);
    return rc;
}

/* The kernels of the image in file path; a file that cannot be read holds every kernel
 * (tests load made-up paths). */
static CUresult file_kernels(const char *path, unsigned char has[SIMK_MAX])
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        memset(has, 1, SIMK_MAX);
        return CUDA_SUCCESS;
    }
    char *buf = malloc(SIM_IMAGE_MAX);
    size_t n = buf ? fread(buf, 1, SIM_IMAGE_MAX, f) : 0;
    fclose(f);
    if (!buf) return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult rc = image_kernels_n(buf, n, has);
    free(buf);
    return rc;
}

/* Loads a module (pool g_mods) or library (g_libs) holding the kernels has[] names. */
static CUresult load_has(simmod *pool, void **out, const unsigned char has[SIMK_MAX])
{
    if (!out) return CUDA_ERROR_INVALID_VALUE;
    if (!sim_current_ctx()) return CUDA_ERROR_INVALID_CONTEXT;
    CUresult rc = CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&sim_lock);
    for (int i = 0; i < MAX_MODS; i++) {
        simmod *m = &pool[i];
        if (m->live) continue;
        memset(m, 0, sizeof *m);
        memcpy(m->has, has, SIMK_MAX);
        for (int k = 0; k < simk_count(); k++) {
            const simk_def *d = simk_get(k);
            m->attrs[k] = (simattrs){SIM_SHARED_DEFAULT - d->static_shared, -1, 0};
            m->funcs[k] = (simfunc){FUNC_MAGIC, m, d, &m->attrs[k]};
            if (pool == g_libs) m->kerns[k] = (simfunc){KERN_MAGIC, m, d, &m->attrs[k]};
        }
        if (!(m->coef = sim_global_alloc_locked(4))) break;
        m->live = 1;
        *out = m;
        rc = CUDA_SUCCESS;
        break;
    }
    pthread_mutex_unlock(&sim_lock);
    return rc;
}

/* Loads from a NUL-terminated image in memory (cuModuleLoadData's contract). */
static CUresult load_image(simmod *pool, void **out, const void *image)
{
    unsigned char has[SIMK_MAX];
    if (!image) return CUDA_ERROR_INVALID_VALUE;
    /* strncmp stops at the first byte that differs: an image without the header is
     * never read further (tests pass tiny made-up images) */
    CUresult rc = CUDA_SUCCESS;
    if (strncmp(image, SIM_IMAGE_MAGIC, strlen(SIM_IMAGE_MAGIC)) != 0)
        memset(has, 1, SIMK_MAX);
    else
        rc = image_kernels_n(image, strnlen(image, SIM_IMAGE_MAX), has);
    return rc == CUDA_SUCCESS ? load_has(pool, out, has) : rc;
}

static CUresult load_file(simmod *pool, void **out, const char *path)
{
    unsigned char has[SIMK_MAX];
    if (!path) return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = file_kernels(path, has);
    return rc == CUDA_SUCCESS ? load_has(pool, out, has) : rc;
}

/* A module loaded by no CUDA entry point at all, so that no shim wrapping the load
 * calls can have seen its image: how a test makes a kernel with "no image". */
SIM_API CUresult simcuda_module_load_unseen(CUmodule *m, const void *image)
{
    return load_image(g_mods, (void **)m, image);
}

static CUresult unload(simmod *pool, void *h)
{
    CUresult rc = CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&sim_lock);
    for (int i = 0; i < MAX_MODS; i++)
        if (h == &pool[i] && pool[i].live) {
            pool[i].live = 0;
            sim_global_free_locked(pool[i].coef);
            pool[i].coef = 0;
            rc = CUDA_SUCCESS;
        }
    pthread_mutex_unlock(&sim_lock);
    return rc;
}

CUresult cuModuleLoad(CUmodule *m, const char *path)
{
    SIM_ENTER(cuModuleLoad);
    return load_file(g_mods, (void **)m, path);
}
CUresult cuModuleLoadData(CUmodule *m, const void *image)
{
    SIM_ENTER(cuModuleLoadData);
    return load_image(g_mods, (void **)m, image);
}
CUresult cuModuleLoadDataEx(CUmodule *m, const void *image, unsigned int n, CUjit_option *o,
                            void **v)
{
    SIM_ENTER(cuModuleLoadDataEx);
    (void)n, (void)o, (void)v;
    return load_image(g_mods, (void **)m, image);
}
CUresult cuModuleLoadFatBinary(CUmodule *m, const void *fatCubin)
{
    SIM_ENTER(cuModuleLoadFatBinary);
    return load_image(g_mods, (void **)m, fatCubin);
}
CUresult cuModuleUnload(CUmodule m)
{
    SIM_ENTER(cuModuleUnload);
    return unload(g_mods, m);
}
CUresult cuLibraryLoadData(CUlibrary *lib, const void *code, CUjit_option *jo, void **jv,
                           unsigned int nj, CUlibraryOption *lo, void **lv, unsigned int nl)
{
    SIM_ENTER(cuLibraryLoadData);
    (void)jo, (void)jv, (void)nj, (void)lo, (void)lv, (void)nl;
    return load_image(g_libs, (void **)lib, code);
}
CUresult cuLibraryLoadFromFile(CUlibrary *lib, const char *path, CUjit_option *jo, void **jv,
                               unsigned int nj, CUlibraryOption *lo, void **lv, unsigned int nl)
{
    SIM_ENTER(cuLibraryLoadFromFile);
    (void)jo, (void)jv, (void)nj, (void)lo, (void)lv, (void)nl;
    return load_file(g_libs, (void **)lib, path);
}
CUresult cuLibraryUnload(CUlibrary lib)
{
    SIM_ENTER(cuLibraryUnload);
    return unload(g_libs, lib);
}

/* ---------------------------------------------------------------- the linker
 * cuLinkAddData/AddFile take images; cuLinkComplete gives one image whose header names
 * every kernel any added image holds (an image without a header: all of them). */
#define LINK_MAGIC 0x4c494e4bu
typedef struct simlink {
    uint32_t magic;
    int added;
    unsigned char has[SIMK_MAX];
    char *out;
    struct simlink *next;
} simlink;
static simlink *g_links; /* live link states, under sim_lock */

/* The live link state st is, or NULL: a stale handle is never dereferenced. */
static simlink *link_of(CUlinkState st)
{
    pthread_mutex_lock(&sim_lock);
    simlink *l = g_links;
    while (l && l != (simlink *)st)
        l = l->next;
    pthread_mutex_unlock(&sim_lock);
    return l;
}

static CUresult link_add(simlink *l, CUresult rc, const unsigned char has[SIMK_MAX])
{
    if (rc != CUDA_SUCCESS) return rc;
    for (int k = 0; k < SIMK_MAX; k++)
        l->has[k] |= has[k];
    l->added++;
    return CUDA_SUCCESS;
}

CUresult cuLinkCreate(unsigned int n, CUjit_option *o, void **v, CUlinkState *out)
{
    SIM_ENTER(cuLinkCreate_v2);
    (void)n, (void)o, (void)v;
    if (!out) return CUDA_ERROR_INVALID_VALUE;
    if (!sim_current_ctx()) return CUDA_ERROR_INVALID_CONTEXT;
    simlink *l = calloc(1, sizeof *l);
    if (!l) return CUDA_ERROR_OUT_OF_MEMORY;
    l->magic = LINK_MAGIC;
    pthread_mutex_lock(&sim_lock);
    l->next = g_links;
    g_links = l;
    pthread_mutex_unlock(&sim_lock);
    *out = (CUlinkState)l;
    return CUDA_SUCCESS;
}

CUresult cuLinkAddData(CUlinkState st, CUjitInputType type, void *data, size_t size,
                       const char *name, unsigned int n, CUjit_option *o, void **v)
{
    SIM_ENTER(cuLinkAddData_v2);
    (void)type, (void)name, (void)n, (void)o, (void)v;
    simlink *l = link_of(st);
    if (!l) return CUDA_ERROR_INVALID_HANDLE;
    if (!data || size == 0) return CUDA_ERROR_INVALID_VALUE;
    unsigned char has[SIMK_MAX];
    return link_add(l, image_kernels_n(data, strnlen(data, size), has), has);
}

CUresult cuLinkAddFile(CUlinkState st, CUjitInputType type, const char *path, unsigned int n,
                       CUjit_option *o, void **v)
{
    SIM_ENTER(cuLinkAddFile_v2);
    (void)type, (void)n, (void)o, (void)v;
    simlink *l = link_of(st);
    if (!l) return CUDA_ERROR_INVALID_HANDLE;
    if (!path) return CUDA_ERROR_INVALID_VALUE;
    unsigned char has[SIMK_MAX];
    return link_add(l, file_kernels(path, has), has);
}

/* The linked image: the header, each kernel on its line, an empty line; NUL-ended.
 * Owned by the link state (freed by cuLinkDestroy). */
CUresult cuLinkComplete(CUlinkState st, void **cubin, size_t *size)
{
    SIM_ENTER(cuLinkComplete);
    simlink *l = link_of(st);
    if (!l) return CUDA_ERROR_INVALID_HANDLE;
    if (!cubin || !size || l->added == 0) return CUDA_ERROR_INVALID_VALUE;
    size_t cap = strlen(SIM_IMAGE_MAGIC) + 2;
    for (int k = 0; k < simk_count(); k++)
        cap += strlen(simk_get(k)->name) + 1;
    free(l->out);
    if (!(l->out = malloc(cap))) return CUDA_ERROR_OUT_OF_MEMORY;
    strcpy(l->out, SIM_IMAGE_MAGIC);
    for (int k = 0; k < simk_count(); k++)
        if (l->has[k]) strcat(strcat(l->out, simk_get(k)->name), "\n");
    strcat(l->out, "\n");
    *cubin = l->out;
    *size = strlen(l->out) + 1;
    return CUDA_SUCCESS;
}

CUresult cuLinkDestroy(CUlinkState st)
{
    SIM_ENTER(cuLinkDestroy);
    simlink *l = link_of(st);
    if (!l) return CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&sim_lock);
    for (simlink **pp = &g_links; *pp; pp = &(*pp)->next)
        if (*pp == l) {
            *pp = l->next;
            break;
        }
    pthread_mutex_unlock(&sim_lock);
    l->magic = 0;
    free(l->out);
    free(l);
    return CUDA_SUCCESS;
}

/* Looks a kernel up by mangled name in a module (want FUNC_MAGIC) or library. */
static CUresult get_by_name(void **out, const void *mod, const char *name, uint32_t magic)
{
    if (!out || !name) return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = CUDA_SUCCESS;
    pthread_mutex_lock(&sim_lock);
    simmod *m = magic == FUNC_MAGIC ? as_module_locked(mod) : module_locked(mod);
    int lib = m && is_library(m);
    const simk_def *d = simk_find(name);
    if (!m || (magic == KERN_MAGIC && !lib))
        rc = CUDA_ERROR_INVALID_HANDLE;
    else if (!d || !m->has[d - simk_get(0)])
        rc = CUDA_ERROR_NOT_FOUND;
    else {
        int k = (int)(d - simk_get(0));
        *out = magic == FUNC_MAGIC ? (void *)&m->funcs[k] : (void *)&m->kerns[k];
    }
    pthread_mutex_unlock(&sim_lock);
    return rc;
}
/* A module's globals: every module (and library) has one, sim_coef, a float that starts
 * at 1.0 and that the coef_scale kernel reads (a __constant__ the program sets). */
static CUresult get_global(simmod *pool, void *h, CUdeviceptr *dp, size_t *bytes, const char *name)
{
    if (!name) return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&sim_lock);
    for (int i = 0; i < MAX_MODS; i++)
        if ((h == &pool[i] || (pool == g_libs && h == &g_libmods[i])) && pool[i].live) {
            rc = strcmp(name, "sim_coef") ? CUDA_ERROR_NOT_FOUND : CUDA_SUCCESS;
            if (rc == CUDA_SUCCESS && dp) *dp = (CUdeviceptr)pool[i].coef;
            if (rc == CUDA_SUCCESS && bytes) *bytes = 4;
        }
    pthread_mutex_unlock(&sim_lock);
    return rc;
}

CUresult cuModuleGetGlobal_v2(CUdeviceptr *dp, size_t *bytes, CUmodule m, const char *name)
{
    SIM_ENTER(cuModuleGetGlobal_v2);
    CUresult rc = get_global(g_mods, m, dp, bytes, name);
    /* a library's module (cuLibraryGetModule): the library's global */
    return rc == CUDA_ERROR_INVALID_HANDLE ? get_global(g_libs, m, dp, bytes, name) : rc;
}

/* A global's address got past any shim (as by a program that asked before the shim was
 * there): how a test makes the trial helper miss a global the program set. */
SIM_API CUresult simcuda_global_unseen(CUdeviceptr *dp, size_t *bytes, void *module_or_library,
                                       const char *name)
{
    CUresult rc = get_global(g_mods, module_or_library, dp, bytes, name);
    return rc == CUDA_ERROR_INVALID_HANDLE ? get_global(g_libs, module_or_library, dp, bytes, name)
                                           : rc;
}

/* Texture and surface objects: handles only (the tex_read kernel reads its handle's low
 * byte), enough for a program to pass one to a kernel. */
static atomic_ullong next_texobj = 0x7e0001;

CUresult cuTexObjectCreate(CUtexObject *t, const CUDA_RESOURCE_DESC *rd,
                           const CUDA_TEXTURE_DESC *td, const CUDA_RESOURCE_VIEW_DESC *vd)
{
    SIM_ENTER(cuTexObjectCreate);
    (void)td, (void)vd;
    if (!t || !rd) return CUDA_ERROR_INVALID_VALUE;
    *t = (CUtexObject)atomic_fetch_add(&next_texobj, 1);
    return CUDA_SUCCESS;
}
CUresult cuTexObjectDestroy(CUtexObject t)
{
    SIM_ENTER(cuTexObjectDestroy);
    return t ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
CUresult cuSurfObjectCreate(CUsurfObject *s, const CUDA_RESOURCE_DESC *rd)
{
    SIM_ENTER(cuSurfObjectCreate);
    if (!s || !rd) return CUDA_ERROR_INVALID_VALUE;
    *s = (CUsurfObject)atomic_fetch_add(&next_texobj, 1);
    return CUDA_SUCCESS;
}
CUresult cuSurfObjectDestroy(CUsurfObject s)
{
    SIM_ENTER(cuSurfObjectDestroy);
    return s ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuLibraryGetGlobal(CUdeviceptr *dp, size_t *bytes, CUlibrary lib, const char *name)
{
    SIM_ENTER(cuLibraryGetGlobal);
    return get_global(g_libs, lib, dp, bytes, name);
}

CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
    SIM_ENTER(cuModuleGetFunction);
    return get_by_name((void **)f, m, name, FUNC_MAGIC);
}
CUresult cuLibraryGetKernel(CUkernel *k, CUlibrary lib, const char *name)
{
    SIM_ENTER(cuLibraryGetKernel);
    return get_by_name((void **)k, lib, name, KERN_MAGIC);
}
CUresult cuLibraryGetModule(CUmodule *m, CUlibrary lib)
{
    SIM_ENTER(cuLibraryGetModule);
    if (!m) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&sim_lock);
    simmod *l = module_locked(lib);
    int ok = l && is_library(l);
    pthread_mutex_unlock(&sim_lock);
    if (!ok) return CUDA_ERROR_INVALID_HANDLE;
    *m = module_handle(l);
    return CUDA_SUCCESS;
}

CUresult cuKernelGetFunction(CUfunction *pf, CUkernel k)
{
    SIM_ENTER(cuKernelGetFunction);
    if (!pf) return CUDA_ERROR_INVALID_VALUE;
    if (!sim_current_ctx()) return CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&sim_lock);
    simfunc *f = handle_locked(k, KERN_MAGIC);
    if (f) *pf = (CUfunction)&f->mod->funcs[f - f->mod->kerns];
    pthread_mutex_unlock(&sim_lock);
    return f ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/* The library a CUkernel belongs to (only CUkernel handles, as on the real driver). */
CUresult cuKernelGetLibrary(CUlibrary *lib, CUkernel k)
{
    SIM_ENTER(cuKernelGetLibrary);
    if (!lib) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&sim_lock);
    simfunc *f = handle_locked(k, KERN_MAGIC);
    if (f) *lib = (CUlibrary)f->mod;
    pthread_mutex_unlock(&sim_lock);
    return f ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/* Name and parameter info: each call takes only its own handle kind. */
static CUresult get_name(const char **name, const void *h, uint32_t magic)
{
    if (!name) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&sim_lock);
    simfunc *f = handle_locked(h, magic);
    if (f) *name = f->k->name;
    pthread_mutex_unlock(&sim_lock);
    return f ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
static CUresult get_param(const void *h, size_t i, size_t *off, size_t *size, uint32_t magic)
{
    CUresult rc = CUDA_SUCCESS;
    pthread_mutex_lock(&sim_lock);
    simfunc *f = handle_locked(h, magic);
    if (!f)
        rc = CUDA_ERROR_INVALID_HANDLE;
    else if (i >= (size_t)f->k->nparams)
        rc = CUDA_ERROR_INVALID_VALUE;
    else {
        if (off) *off = f->k->off[i];
        if (size) *size = f->k->p[i].size;
    }
    pthread_mutex_unlock(&sim_lock);
    return rc;
}
CUresult cuFuncGetName(const char **name, CUfunction f)
{
    SIM_ENTER(cuFuncGetName);
    return get_name(name, f, FUNC_MAGIC);
}
CUresult cuKernelGetName(const char **name, CUkernel k)
{
    SIM_ENTER(cuKernelGetName);
    return get_name(name, k, KERN_MAGIC);
}
CUresult cuFuncGetParamInfo(CUfunction f, size_t i, size_t *off, size_t *size)
{
    SIM_ENTER(cuFuncGetParamInfo);
    return get_param(f, i, off, size, FUNC_MAGIC);
}
CUresult cuKernelGetParamInfo(CUkernel k, size_t i, size_t *off, size_t *size)
{
    SIM_ENTER(cuKernelGetParamInfo);
    return get_param(k, i, off, size, KERN_MAGIC);
}
CUresult cuFuncGetModule(CUmodule *m, CUfunction h)
{
    SIM_ENTER(cuFuncGetModule);
    if (!m) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&sim_lock);
    simfunc *f = handle_locked(h, FUNC_MAGIC);
    if (f) *m = module_handle(f->mod);
    pthread_mutex_unlock(&sim_lock);
    return f ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/* Functions are always loaded here; SIMCUDA_FUNC_LOADS names a file that gets "PID NAME"
 * for each call, so that a test sees which functions a process loaded explicitly. */
CUresult cuFuncLoad(CUfunction h)
{
    SIM_ENTER(cuFuncLoad);
    pthread_mutex_lock(&sim_lock);
    simfunc *f = handle_locked(h, FUNC_MAGIC);
    const char *name = f ? f->k->name : NULL;
    pthread_mutex_unlock(&sim_lock);
    if (!f) return CUDA_ERROR_INVALID_HANDLE;
    const char *path = getenv("SIMCUDA_FUNC_LOADS");
    FILE *out = path && *path ? fopen(path, "a") : NULL;
    if (out) {
        fprintf(out, "%d %s\n", (int)getpid(), name);
        fclose(out);
    }
    return CUDA_SUCCESS;
}

static int warp_round(unsigned t)
{
    return (int)((t + 31) / 32 * 32);
}

/* Threads per block the kernel can launch with: its launch bounds and its registers. */
static int kernel_max_threads(const simk_def *k)
{
    int by_regs = SIM_REGS_PER_SM / k->num_regs / 32 * 32;
    int m = k->max_threads < by_regs ? k->max_threads : by_regs;
    return m < SIM_MAX_THREADS ? m : SIM_MAX_THREADS;
}

/* Blocks of T threads with dyn bytes of dynamic shared memory resident on one SM. */
static int blocks_per_sm(const simk_def *k, unsigned T, size_t dyn)
{
    int tr = warp_round(T);
    if (tr == 0 || tr * k->num_regs > SIM_REGS_PER_SM || (int)T > kernel_max_threads(k)) return 0;
    int n = SIM_MAX_BLOCKS_PER_SM;
    if (SIM_THREADS_PER_SM / tr < n) n = SIM_THREADS_PER_SM / tr;
    if (SIM_REGS_PER_SM / (tr * k->num_regs) < n) n = SIM_REGS_PER_SM / (tr * k->num_regs);
    size_t sh = (size_t)k->static_shared + dyn;
    if (sh > 0 && (int)(SIM_SHARED_PER_SM / (sh + 1024)) < n)
        n = (int)(SIM_SHARED_PER_SM / (sh + 1024));
    return n;
}

static CUresult func_attr_get(int *v, CUfunction_attribute a, const simfunc *f)
{
    const simk_def *k = f->k;
    switch (a) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = kernel_max_threads(k); break;
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *v = k->static_shared; break;
    case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES:
    case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES:
    case CU_FUNC_ATTRIBUTE_CACHE_MODE_CA:
    case CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH:
    case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE: *v = 0; break;
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *v = k->num_regs; break;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION:
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *v = 90; break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *v = f->attrs->max_dyn; break;
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: *v = f->attrs->carveout; break;
    case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
        *v = f->attrs->nonportable_cluster;
        break;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

static CUresult func_attr_set(CUfunction_attribute a, int v, simfunc *f)
{
    switch (a) {
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
        if (v < 0 || v + f->k->static_shared > SIM_SHARED_OPTIN) return CUDA_ERROR_INVALID_VALUE;
        f->attrs->max_dyn = v;
        return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
        if (v < -1 || v > 100) return CUDA_ERROR_INVALID_VALUE;
        f->attrs->carveout = v;
        return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
        f->attrs->nonportable_cluster = v != 0;
        return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH:
    case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE: return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE; /* read-only */
    }
}

CUresult cuFuncGetAttribute(int *v, CUfunction_attribute a, CUfunction h)
{
    SIM_ENTER(cuFuncGetAttribute);
    if (!v) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&sim_lock);
    simfunc *f = any_handle_locked(h);
    CUresult rc = f ? func_attr_get(v, a, f) : CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_unlock(&sim_lock);
    return rc;
}
CUresult cuFuncSetAttribute(CUfunction h, CUfunction_attribute a, int v)
{
    SIM_ENTER(cuFuncSetAttribute);
    pthread_mutex_lock(&sim_lock);
    simfunc *f = any_handle_locked(h);
    CUresult rc = f ? func_attr_set(a, v, f) : CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_unlock(&sim_lock);
    return rc;
}
CUresult cuKernelGetAttribute(int *v, CUfunction_attribute a, CUkernel h, CUdevice d)
{
    SIM_ENTER(cuKernelGetAttribute);
    if (!v) return CUDA_ERROR_INVALID_VALUE;
    if (d < 0 || d >= SIMCUDA_MAX_DEVICES) return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&sim_lock);
    simfunc *f = handle_locked(h, KERN_MAGIC);
    CUresult rc = f ? func_attr_get(v, a, f) : CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_unlock(&sim_lock);
    return rc;
}
CUresult cuKernelSetAttribute(CUfunction_attribute a, int v, CUkernel h, CUdevice d)
{
    SIM_ENTER(cuKernelSetAttribute);
    if (d < 0 || d >= SIMCUDA_MAX_DEVICES) return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&sim_lock);
    simfunc *f = handle_locked(h, KERN_MAGIC);
    CUresult rc = f ? func_attr_set(a, v, f) : CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_unlock(&sim_lock);
    return rc;
}
CUresult cuFuncSetCacheConfig(CUfunction h, CUfunc_cache c)
{
    SIM_ENTER(cuFuncSetCacheConfig);
    (void)c;
    pthread_mutex_lock(&sim_lock);
    simfunc *f = any_handle_locked(h);
    pthread_mutex_unlock(&sim_lock);
    return f ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult occupancy(int *n, CUfunction h, int T, size_t dyn)
{
    if (!n || T <= 0) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&sim_lock);
    simfunc *f = any_handle_locked(h);
    if (f) *n = blocks_per_sm(f->k, (unsigned)T, dyn);
    pthread_mutex_unlock(&sim_lock);
    return f ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, CUfunction f, int T, size_t dyn)
{
    SIM_ENTER(cuOccupancyMaxActiveBlocksPerMultiprocessor);
    return occupancy(n, f, T, dyn);
}
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *n, CUfunction f, int T,
                                                              size_t dyn, unsigned int fl)
{
    SIM_ENTER(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags);
    (void)fl;
    return occupancy(n, f, T, dyn);
}

/* ------------------------------------------------------------------ launches */

typedef struct {
    unsigned grid[3], block[3], shared;
    CUstream stream;
    int ptsz, coop;
    unsigned cluster[3]; /* 0: none */
} launch_args;

/* Packs the arguments into r->params at the kernel's offsets, from kernelParams (one
 * pointer per argument) or from extra's CU_LAUNCH_PARAM_BUFFER_POINTER/SIZE. */
static CUresult pack_params(sim_launch_rec *r, void **params, void **extra)
{
    const simk_def *k = r->k;
    if (params && extra) return CUDA_ERROR_INVALID_VALUE;
    if (k->nparams == 0) return CUDA_SUCCESS;
    if (params) {
        for (int i = 0; i < k->nparams; i++) {
            if (!params[i]) return CUDA_ERROR_INVALID_VALUE;
            memcpy(r->params + k->off[i], params[i], k->p[i].size);
        }
        return CUDA_SUCCESS;
    }
    if (!extra) return CUDA_ERROR_INVALID_VALUE;
    const void *buf = NULL;
    const size_t *size = NULL;
    for (int i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
        if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
            buf = extra[i + 1];
        else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE)
            size = extra[i + 1];
        else
            return CUDA_ERROR_INVALID_VALUE;
    }
    if (!buf || !size || *size < k->param_bytes) return CUDA_ERROR_INVALID_VALUE;
    memcpy(r->params, buf, k->param_bytes);
    return CUDA_SUCCESS;
}

/* The real driver's launch checks, in its order of severity (see simcuda.h). */
static CUresult validate(const simfunc *f, const launch_args *a)
{
    const simk_def *k = f->k;
    static const unsigned gmax[3] = {2147483647u, 65535u, 65535u};
    static const unsigned bmax[3] = {1024u, 1024u, 64u};
    for (int i = 0; i < 3; i++)
        if (a->grid[i] == 0 || a->grid[i] > gmax[i] || a->block[i] == 0 || a->block[i] > bmax[i])
            return CUDA_ERROR_INVALID_VALUE;
    unsigned long long T = (unsigned long long)a->block[0] * a->block[1] * a->block[2];
    if (T > SIM_MAX_THREADS || T > (unsigned long long)k->max_threads)
        return CUDA_ERROR_INVALID_VALUE;
    if ((unsigned long long)warp_round((unsigned)T) * (unsigned)k->num_regs > SIM_REGS_PER_SM)
        return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
    if ((long long)a->shared > f->attrs->max_dyn ||
        (long long)a->shared + k->static_shared > SIM_SHARED_OPTIN)
        return CUDA_ERROR_INVALID_VALUE;
    if (a->cluster[0]) {
        unsigned n = 1;
        for (int i = 0; i < 3; i++) {
            if (a->cluster[i] == 0 || a->grid[i] % a->cluster[i])
                return CUDA_ERROR_INVALID_CLUSTER_SIZE;
            n *= a->cluster[i];
        }
        if (n > (f->attrs->nonportable_cluster ? 16u : 8u)) return CUDA_ERROR_INVALID_CLUSTER_SIZE;
    }
    if (a->coop) {
        double blocks = (double)a->grid[0] * a->grid[1] * a->grid[2];
        if (blocks > (double)blocks_per_sm(k, (unsigned)T, a->shared) * SIM_SM_COUNT)
            return CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;
    }
    return CUDA_SUCCESS;
}

CUresult sim_kernel_rec_locked(CUfunction h, const unsigned grid[3], const unsigned block[3],
                               unsigned shared, void **params, void **extra, sim_launch_rec *r)
{
    launch_args a;
    memset(&a, 0, sizeof a);
    memcpy(a.grid, grid, sizeof a.grid);
    memcpy(a.block, block, sizeof a.block);
    a.shared = shared;
    memset(r, 0, sizeof *r);
    simfunc *f = any_handle_locked(h);
    if (!f) return CUDA_ERROR_INVALID_HANDLE;
    CUresult rc = validate(f, &a);
    if (rc != CUDA_SUCCESS) return rc;
    r->k = f->k;
    r->coef = f->mod->coef;
    memcpy(r->grid, grid, sizeof r->grid);
    memcpy(r->block, block, sizeof r->block);
    r->shared = shared;
    return pack_params(r, params, extra);
}

static CUresult launch(CUfunction h, const launch_args *a, void **params, void **extra)
{
    if (!sim_current_ctx()) return CUDA_ERROR_INVALID_CONTEXT;
    sim_launch_rec r;
    memset(&r, 0, sizeof r);
    CUresult rc = CUDA_SUCCESS;
    pthread_mutex_lock(&sim_lock);
    simfunc *f = any_handle_locked(h);
    if (!f) rc = CUDA_ERROR_INVALID_HANDLE;
    if (rc == CUDA_SUCCESS) rc = validate(f, a);
    if (rc == CUDA_SUCCESS) {
        r.k = f->k;
        r.coef = f->mod->coef;
        memcpy(r.grid, a->grid, sizeof r.grid);
        memcpy(r.block, a->block, sizeof r.block);
        r.shared = a->shared;
        rc = pack_params(&r, params, extra);
    }
    simstream *s = rc == CUDA_SUCCESS ? sim_stream_locked(a->stream, a->ptsz, &rc) : NULL;
    int held = 0;
    if (s) {
        rc = sim_stream_capturing(s) ? sim_capture_launch_locked(s, &r)
                                     : sim_execute_locked(s, &r, 0);
        held = rc == CUDA_SUCCESS && sim_hold_hit_locked(&r);
    }
    pthread_mutex_unlock(&sim_lock);
    if (held) sim_hold_wait();
    return rc;
}

static CUresult launch_plain(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                             unsigned by, unsigned bz, unsigned sh, CUstream s, void **p, void **x,
                             int ptsz, int coop)
{
    launch_args a = {{gx, gy, gz}, {bx, by, bz}, sh, s, ptsz, coop, {0, 0, 0}};
    return launch(f, &a, p, x);
}

CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                        unsigned int bx, unsigned int by, unsigned int bz, unsigned int sh,
                        CUstream s, void **p, void **x)
{
    SIM_ENTER(cuLaunchKernel);
    return launch_plain(f, gx, gy, gz, bx, by, bz, sh, s, p, x, 0, 0);
}
CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                             unsigned int bx, unsigned int by, unsigned int bz, unsigned int sh,
                             CUstream s, void **p, void **x)
{
    SIM_ENTER(cuLaunchKernel_ptsz);
    return launch_plain(f, gx, gy, gz, bx, by, bz, sh, s, p, x, 1, 0);
}
CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                                   unsigned int bx, unsigned int by, unsigned int bz,
                                   unsigned int sh, CUstream s, void **p)
{
    SIM_ENTER(cuLaunchCooperativeKernel);
    return launch_plain(f, gx, gy, gz, bx, by, bz, sh, s, p, NULL, 0, 1);
}
CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy,
                                        unsigned int gz, unsigned int bx, unsigned int by,
                                        unsigned int bz, unsigned int sh, CUstream s, void **p)
{
    SIM_ENTER(cuLaunchCooperativeKernel_ptsz);
    return launch_plain(f, gx, gy, gz, bx, by, bz, sh, s, p, NULL, 1, 1);
}

static CUresult launch_ex(const CUlaunchConfig *c, CUfunction f, void **p, void **x, int ptsz)
{
    if (!c || (c->numAttrs && !c->attrs)) return CUDA_ERROR_INVALID_VALUE;
    launch_args a = {{c->gridDimX, c->gridDimY, c->gridDimZ},
                     {c->blockDimX, c->blockDimY, c->blockDimZ},
                     c->sharedMemBytes,
                     c->hStream,
                     ptsz,
                     0,
                     {0, 0, 0}};
    for (unsigned i = 0; i < c->numAttrs; i++) {
        const CUlaunchAttribute *at = &c->attrs[i];
        if (at->id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE) a.coop = at->value.cooperative != 0;
        if (at->id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
            a.cluster[0] = at->value.clusterDim.x;
            a.cluster[1] = at->value.clusterDim.y;
            a.cluster[2] = at->value.clusterDim.z;
            if (!a.cluster[0] && !a.cluster[1] && !a.cluster[2]) continue;
            if (!a.cluster[0]) a.cluster[0] = 0xffffffffu; /* zero in one dim: invalid */
        }
    }
    return launch(f, &a, p, x);
}
CUresult cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **p, void **x)
{
    SIM_ENTER(cuLaunchKernelEx);
    return launch_ex(c, f, p, x, 0);
}
CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *c, CUfunction f, void **p, void **x)
{
    SIM_ENTER(cuLaunchKernelEx_ptsz);
    return launch_ex(c, f, p, x, 1);
}

SIM_API double simcuda_cost_ns(const char *name, const unsigned grid[3], const unsigned block[3],
                               unsigned shared, void **kernelParams)
{
    const simk_def *k = simk_find(name);
    if (!k || !grid || !block) return -1;
    sim_launch_rec r;
    memset(&r, 0, sizeof r);
    r.k = k;
    memcpy(r.grid, grid, sizeof r.grid);
    memcpy(r.block, block, sizeof r.block);
    r.shared = shared;
    for (int i = 0; kernelParams && i < k->nparams; i++)
        if (kernelParams[i]) memcpy(r.params + k->off[i], kernelParams[i], k->p[i].size);
    return sim_cost(&r);
}

/* ------------------------------------------------------------------ cuGetProcAddress */

enum { SIM_KIND_N = 0, SIM_KIND_P = 1 };
typedef struct {
    const char *base;
    int version;
    int per_thread;
    void *fn;
} proc_row;
#define PROC_ROW(base, ver, kind, sym) {base, ver, SIM_KIND_##kind, (void *)sym},
static const proc_row g_procs[] = {SIM_FUNCS(PROC_ROW, PROC_ROW)};
#define NPROCS ((int)(sizeof g_procs / sizeof g_procs[0]))

/* The newest row of `symbol` with version <= cudaVersion, of the per-thread kind when
 * flags ask for it and one exists, else of the legacy kind. */
static CUresult proc_lookup(const char *symbol, void **pfn, int ver, cuuint64_t flags,
                            CUdriverProcAddressQueryResult *status)
{
    if (!symbol || !pfn || (flags & ~(cuuint64_t)3)) return CUDA_ERROR_INVALID_VALUE;
    const proc_row *best = NULL;
    int known = 0;
    for (int pass = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) ? 1 : 0;
         pass >= 0 && !best; pass--)
        for (int i = 0; i < NPROCS; i++) {
            const proc_row *r = &g_procs[i];
            if (strcmp(r->base, symbol) != 0) continue;
            known = 1;
            if (r->per_thread == pass && r->version <= ver && (!best || r->version > best->version))
                best = r;
        }
    *pfn = best ? best->fn : NULL;
    if (status)
        *status = best    ? CU_GET_PROC_ADDRESS_SUCCESS
                  : known ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                          : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return best ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

CUresult cuGetProcAddress(const char *symbol, void **pfn, int ver, cuuint64_t flags)
{
    SIM_ENTER_NOINIT(cuGetProcAddress);
    return proc_lookup(symbol, pfn, ver, flags, NULL);
}
CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int ver, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *status)
{
    SIM_ENTER_NOINIT(cuGetProcAddress_v2);
    return proc_lookup(symbol, pfn, ver, flags, status);
}
