/*
 * probe_addr_hint -- can a second process map memory at the addresses a first process's
 * buffers have? (issue 24: the trial helper maps its copies of the program's data at the
 * program's own addresses where the driver honours the address hint, so that pointers
 * stored inside device memory stay valid; otherwise it rewrites pointer arguments.)
 *
 *   probe_addr_hint                 on a GPU machine, without the shim
 *
 * The parent allocates buffers of 4 KiB, 1 MiB, 64 MiB and 1 GiB twice: with cuMemAlloc
 * (`memalloc`) and with cuMemCreate + cuMemAddressReserve + cuMemMap (`vmm`, sizes
 * rounded up to the allocation granularity), fills them with 0x11, and spawns itself
 * (posix_spawn of /proc/self/exe, `--child KIND:SIZE:ADDR...`). The child, like the
 * helper, makes its primary context, then for each buffer reserves the range that covers
 * it, floored and rounded to the granularity, with that address as the hint
 * (cuMemAddressReserve(&p, size, 0, hint, 0)), keeping every reservation, and maps a
 * cuMemCreate'd allocation at what it got (cuMemMap + cuMemSetAccess), writes it
 * (cuMemsetD8 0x5A) and reads one byte back. One line per buffer:
 *
 *   addr_hint <kind> <size> honoured|moved|refused <got> map <ok|CUresult name [call]>
 *
 * (`covered` instead, when an earlier buffer's reservation already holds its range: small
 * cuMemAlloc buffers share a granule.)
 * Also, before its context exists, the child tries each hint once (reserve, then free):
 * `addr_hint_before_ctx <kind> <size> honoured|moved|<CUresult name> <got>`; and after the
 * reservations it allocates 64 MiB with cuMemAlloc and says whether that lands inside a
 * parent buffer's range (`child_memalloc`). The parent then checks that its own buffers
 * still hold 0x11 (`parent_intact <kind> <size> yes|no`: the child's writes went to its
 * own memory), and prints the device's compute mode and whether MPS is on (`device`).
 * Exit 0 when everything ran (whatever the driver answered), 1 otherwise.
 *
 * Built by tests/gpu/build.sh against the toolkit's stub libcuda.so (the real driver at
 * run time).
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

extern char **environ;

#define NBUF 8
#define MIB (1024ull * 1024ull)

static const char *const kind_names[2] = {"memalloc", "vmm"};
static const size_t sizes[4] = {4096, MIB, 64 * MIB, 1024 * MIB};

/* The driver's name for r ("CUDA_ERROR_INVALID_VALUE"), never NULL. */
static const char *errname(CUresult r)
{
    const char *s = NULL;
    if (cuGetErrorName(r, &s) != CUDA_SUCCESS || !s) return "CUDA_ERROR_(unknown)";
    return s;
}

/* Setup calls: a failure ends the process with the call's name (exit 1). */
#define CU(call)                                                                                   \
    do {                                                                                           \
        CUresult r_ = (call);                                                                      \
        if (r_ != CUDA_SUCCESS) {                                                                  \
            fprintf(stderr, "probe_addr_hint: %s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,  \
                    errname(r_));                                                                  \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* Probe calls: a failure is an answer: it is recorded with the call's name and ends the
 * sequence. */
#define TRY(call, res, where)                                                                      \
    do {                                                                                           \
        if ((res) == CUDA_SUCCESS) {                                                               \
            (res) = (call);                                                                        \
            if ((res) != CUDA_SUCCESS) (where) = #call;                                            \
        }                                                                                          \
    } while (0)

typedef struct {
    int kind; /* 0 memalloc, 1 vmm */
    size_t size;
    CUdeviceptr addr;
    CUmemGenericAllocationHandle h; /* vmm */
    size_t mapped;                  /* vmm: size rounded to the granularity */
} buf_t;

static CUdevice dev;

static CUmemAllocationProp alloc_prop(void)
{
    CUmemAllocationProp p;
    memset(&p, 0, sizeof p);
    p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    p.location.id = (int)dev;
    /* exportable, as the shim's staging memory is */
    p.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    return p;
}

static size_t granularity(void)
{
    CUmemAllocationProp p = alloc_prop();
    size_t g = 0;
    CU(cuMemGetAllocationGranularity(&g, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    return g ? g : 2 * MIB;
}

static void open_device(CUcontext *ctx)
{
    CU(cuDevicePrimaryCtxRetain(ctx, dev));
    CU(cuCtxSetCurrent(*ctx));
}

static void access_rw(CUmemAccessDesc *a)
{
    memset(a, 0, sizeof *a);
    a->location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    a->location.id = (int)dev;
    a->flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
}

/* ------------------------------------------------------------------------------ child */

typedef struct {
    int kind;
    size_t size;
    CUdeviceptr addr, hint, got;
    size_t span; /* the reserved range: [hint, hint + span) covers [addr, addr + size) */
    CUresult res;
    const char *where;
    CUmemGenericAllocationHandle h;
    int reserved, created, mapped;
} probe_t;

static int parse_arg(const char *s, probe_t *p, size_t g)
{
    char kind[16];
    unsigned long long size, addr;
    if (sscanf(s, "%15[^:]:%llu:%llx", kind, &size, &addr) != 3) return -1;
    memset(p, 0, sizeof *p);
    p->kind = strcmp(kind, "vmm") == 0;
    p->size = (size_t)size;
    p->addr = (CUdeviceptr)addr;
    p->hint = p->addr / g * g;
    p->span = ((p->addr + p->size + g - 1) / g * g) - p->hint;
    return 0;
}

/* Each hint once before the context exists: does the reservation work yet, and where? */
static void before_context(probe_t *p, int n)
{
    for (int i = 0; i < n; i++) {
        CUdeviceptr got = 0;
        CUresult r = cuMemAddressReserve(&got, p[i].span, 0, p[i].hint, 0);
        const char *what = r != CUDA_SUCCESS ? errname(r) : got == p[i].hint ? "honoured" : "moved";
        printf("addr_hint_before_ctx %s %zu %s 0x%llx\n", kind_names[p[i].kind], p[i].size, what,
               (unsigned long long)got);
        if (r == CUDA_SUCCESS) cuMemAddressFree(got, p[i].span);
    }
}

/* The earlier probe whose reservation (made at its hint) holds p[i]'s whole range, or -1. */
static int overlapping(const probe_t *p, int i)
{
    for (int j = 0; j < i; j++)
        if (p[j].reserved && p[j].got == p[j].hint && p[j].hint <= p[i].hint &&
            p[i].hint + p[i].span <= p[j].hint + p[j].span)
            return j;
    return -1;
}

/* Reserve at the hint, then map, make accessible, write and read back. */
static void probe_one(probe_t *p, const CUmemAllocationProp *prop, const CUmemAccessDesc *acc)
{
    p->res = cuMemAddressReserve(&p->got, p->span, 0, p->hint, 0);
    if (p->res != CUDA_SUCCESS) {
        p->where = "cuMemAddressReserve";
        return;
    }
    p->reserved = 1;
    TRY(cuMemCreate(&p->h, p->span, prop, 0), p->res, p->where);
    p->created = p->res == CUDA_SUCCESS;
    TRY(cuMemMap(p->got, p->span, 0, p->h, 0), p->res, p->where);
    p->mapped = p->res == CUDA_SUCCESS;
    TRY(cuMemSetAccess(p->got, p->span, acc, 1), p->res, p->where);
    TRY(cuMemsetD8(p->got, 0x5A, p->span), p->res, p->where);
    TRY(cuCtxSynchronize(), p->res, p->where);
    unsigned char b = 0;
    TRY(cuMemcpyDtoH(&b, p->got + p->span - 1, 1), p->res, p->where);
    if (p->res == CUDA_SUCCESS && b != 0x5A) p->where = "read back (not 0x5A)";
}

static void release(probe_t *p)
{
    if (p->mapped) cuMemUnmap(p->got, p->span);
    if (p->created) cuMemRelease(p->h);
    if (p->reserved) cuMemAddressFree(p->got, p->span);
}

static int child(int argc, char **argv)
{
    CU(cuInit(0));
    CU(cuDeviceGet(&dev, 0));
    const size_t g = granularity();
    probe_t p[NBUF];
    int n = 0;
    for (int i = 0; i < argc && n < NBUF; i++)
        if (parse_arg(argv[i], &p[n], g) == 0) n++;
    before_context(p, n);

    CUcontext ctx;
    open_device(&ctx);
    CUmemAllocationProp prop = alloc_prop();
    CUmemAccessDesc acc;
    access_rw(&acc);
    for (int i = 0; i < n; i++) { /* every reservation kept, as the helper's would be */
        int j = overlapping(p, i);
        if (j >= 0) { /* small cuMemAlloc buffers share a granule: one reservation serves */
            printf("addr_hint %s %zu covered 0x%llx map (the reservation of %s %zu)\n",
                   kind_names[p[i].kind], p[i].size, (unsigned long long)p[j].got,
                   kind_names[p[j].kind], p[j].size);
            continue;
        }
        probe_one(&p[i], &prop, &acc);
        const char *hint = !p[i].reserved          ? "refused"
                           : p[i].got == p[i].hint ? "honoured"
                                                   : "moved";
        const char *map = p[i].res != CUDA_SUCCESS ? errname(p[i].res)
                          : p[i].where             ? "mismatch"
                                                   : "ok";
        printf("addr_hint %s %zu %s 0x%llx map %s%s%s\n", kind_names[p[i].kind], p[i].size, hint,
               (unsigned long long)p[i].got, map, p[i].where ? " " : "",
               p[i].where ? p[i].where : "");
    }
    /* the helper's own allocations: do they land inside the program's ranges? */
    CUdeviceptr own = 0;
    CUresult r = cuMemAlloc(&own, 64 * MIB);
    int inside = 0;
    for (int i = 0; r == CUDA_SUCCESS && i < n; i++)
        if (own < p[i].addr + p[i].size && p[i].addr < own + 64 * MIB) inside = 1;
    if (r == CUDA_SUCCESS)
        printf("child_memalloc %llu 0x%llx inside_parent_range %s\n", 64 * MIB,
               (unsigned long long)own, inside ? "yes" : "no");
    else
        printf("child_memalloc %llu failed %s\n", 64 * MIB, errname(r));
    if (r == CUDA_SUCCESS) cuMemFree(own);
    for (int i = 0; i < n; i++)
        release(&p[i]);
    fflush(stdout);
    CU(cuDevicePrimaryCtxRelease(dev));
    return 0;
}

/* ----------------------------------------------------------------------------- parent */

static void print_device(void)
{
    char name[256] = "?";
    int drv = 0, mode = -1, mps = -1, vmm = -1;
    cuDeviceGetName(name, sizeof name, dev);
    cuDriverGetVersion(&drv);
    CU(cuDeviceGetAttribute(&mode, CU_DEVICE_ATTRIBUTE_COMPUTE_MODE, dev));
    CUresult rm = cuDeviceGetAttribute(&mps, CU_DEVICE_ATTRIBUTE_MPS_ENABLED, dev);
    cuDeviceGetAttribute(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, dev);
    const char *m = mode == CU_COMPUTEMODE_DEFAULT             ? "default"
                    : mode == CU_COMPUTEMODE_PROHIBITED        ? "prohibited"
                    : mode == CU_COMPUTEMODE_EXCLUSIVE_PROCESS ? "exclusive_process"
                                                               : "other";
    printf("device %s driver %d compute_mode %s(%d) mps %s vmm %d granularity %zu\n", name, drv, m,
           mode,
           rm != CUDA_SUCCESS ? errname(rm)
           : mps              ? "on"
                              : "off",
           vmm, granularity());
}

static void alloc_all(buf_t *b, int *n)
{
    CUmemAllocationProp prop = alloc_prop();
    CUmemAccessDesc acc;
    access_rw(&acc);
    const size_t g = granularity();
    *n = 0;
    for (int k = 0; k < 2; k++)
        for (int s = 0; s < 4; s++) {
            buf_t *x = &b[(*n)++];
            memset(x, 0, sizeof *x);
            x->kind = k;
            x->size = sizes[s];
            if (k == 0) {
                CU(cuMemAlloc(&x->addr, x->size));
            } else {
                x->mapped = (x->size + g - 1) / g * g;
                CU(cuMemCreate(&x->h, x->mapped, &prop, 0));
                CU(cuMemAddressReserve(&x->addr, x->mapped, 0, 0, 0));
                CU(cuMemMap(x->addr, x->mapped, 0, x->h, 0));
                CU(cuMemSetAccess(x->addr, x->mapped, &acc, 1));
            }
            CU(cuMemsetD8(x->addr, 0x11, x->size));
        }
    CU(cuCtxSynchronize());
}

/* Does b still hold 0x11 (its first, middle and last 4 KiB)? */
static int intact(const buf_t *b)
{
    static unsigned char h[4096];
    size_t chunk = b->size < sizeof h ? b->size : sizeof h;
    size_t at[3] = {0, (b->size - chunk) / 2, b->size - chunk};
    for (int i = 0; i < 3; i++) {
        CU(cuMemcpyDtoH(h, b->addr + at[i], chunk));
        for (size_t j = 0; j < chunk; j++)
            if (h[j] != 0x11) return 0;
    }
    return 1;
}

static int run_child(const buf_t *b, int n)
{
    char args[NBUF][64];
    char *argv[NBUF + 3];
    int a = 0;
    argv[a++] = "probe_addr_hint";
    argv[a++] = "--child";
    for (int i = 0; i < n; i++) {
        snprintf(args[i], sizeof args[i], "%s:%zu:%llx", kind_names[b[i].kind], b[i].size,
                 (unsigned long long)b[i].addr);
        printf("parent %s %zu 0x%llx\n", kind_names[b[i].kind], b[i].size,
               (unsigned long long)b[i].addr);
        argv[a++] = args[i];
    }
    argv[a] = NULL;
    fflush(stdout);
    pid_t pid;
    int e = posix_spawn(&pid, "/proc/self/exe", NULL, NULL, argv, environ);
    if (e != 0) {
        fprintf(stderr, "probe_addr_hint: posix_spawn: %s\n", strerror(e));
        return -1;
    }
    int st = 0;
    if (waitpid(pid, &st, 0) != pid) return -1;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        printf("child failed: %s %d\n", WIFEXITED(st) ? "exit" : "signal",
               WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "--child") == 0) return child(argc - 2, argv + 2);
    CU(cuInit(0));
    CU(cuDeviceGet(&dev, 0));
    CUcontext ctx;
    open_device(&ctx);
    print_device();
    buf_t b[NBUF];
    int n = 0;
    alloc_all(b, &n);
    int rc = run_child(b, n) == 0 ? 0 : 1;
    for (int i = 0; i < n; i++) {
        int ok = intact(&b[i]);
        printf("parent_intact %s %zu %s\n", kind_names[b[i].kind], b[i].size, ok ? "yes" : "no");
        if (!ok) rc = 1;
        if (b[i].kind == 0) {
            cuMemFree(b[i].addr);
        } else {
            cuMemUnmap(b[i].addr, b[i].mapped);
            cuMemRelease(b[i].h);
            cuMemAddressFree(b[i].addr, b[i].mapped);
        }
    }
    CU(cuDevicePrimaryCtxRelease(dev));
    return rc;
}
