/*
 * tools/gpu/gate/standin_cuda.c — a stand-in for the NVIDIA driver (libcuda.so.1) and NVRTC (libnvrtc.so.13),
 * used only by the compile gate (tools/gpu/gate/compile-gate.sh) and never shipped.
 *
 * TornadoVM's PTX and CUDA backends need a driver at start-up and a compiler at run time. On a build machine
 * with no GPU this file answers their calls as one H200 would (compute capability 9.0, 132 SMs, 141 GB), so
 * TornadoVM builds every task graph and generates its code; the code is not run. What the backends hand over
 * is written to $STANDIN_CUDA_DUMP:
 *   - PTX route: every module given to cuModuleLoadData/Ex (TornadoVM's PTX), as NNNNN.ptx, to be assembled
 *     by ptxas for sm_90 (names are PID-NNNNN: each process numbers its own);
 *   - CUDA route: every program given to nvrtcCompileProgram (TornadoVM's CUDA C), as NNNNN.cu with its
 *     options in NNNNN.opts and the program's name in NNNNN.name, to be compiled by nvcc for sm_90.
 * Memory is address space (mmap'd lazily, never touched: copies move nothing, unless STANDIN_CUDA_COPY=1);
 * kernel launches do nothing (each is logged to launches.tsv: module number, name, grid, block, dynamic shared
 * memory), so every
 * result read back is whatever the buffer held before.
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* ------------------------------------------------------------------ the dump folder */

static int dump_counter = 0;

static FILE *dump_open(const char *ext, int n) {
    const char *dir = getenv("STANDIN_CUDA_DUMP");
    if (dir == NULL || *dir == 0) return NULL;
    char path[4096];
    snprintf(path, sizeof path, "%s/%d-%05d.%s", dir, (int) getpid(), n, ext);   /* pid: each JVM of a gate run has its own numbers */
    FILE *f = fopen(path, "w");
    if (f == NULL) fprintf(stderr, "standin-cuda: cannot write %s\n", path);
    return f;
}

/* ------------------------------------------------------------------ the device */

#define H200_MEMORY (141ull * 1000 * 1000 * 1000)

CUresult cuInit(unsigned int flags) { (void) flags; return CUDA_SUCCESS; }
CUresult cuDriverGetVersion(int *v) { *v = 13000; return CUDA_SUCCESS; }
CUresult cuDeviceGetCount(int *n) { *n = 1; return CUDA_SUCCESS; }
CUresult cuDeviceGet(CUdevice *d, int ordinal) {
    if (ordinal != 0) return CUDA_ERROR_INVALID_DEVICE;
    *d = 0;
    return CUDA_SUCCESS;
}
CUresult cuDeviceGetName(char *name, int len, CUdevice d) {
    (void) d;
    snprintf(name, (size_t) len, "NVIDIA H200 (compile-gate stand-in, no GPU)");
    return CUDA_SUCCESS;
}
CUresult cuDeviceTotalMem(size_t *bytes, CUdevice d) { (void) d; *bytes = H200_MEMORY; return CUDA_SUCCESS; }

CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d) {
    (void) d;
    switch (a) {
        case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = 1024; break;
        case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: *v = 1024; break;
        case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: *v = 1024; break;
        case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: *v = 64; break;
        case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: *v = 2147483647; break;
        case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: *v = 65535; break;
        case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: *v = 65535; break;
        case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *v = 49152; break;
        case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY: *v = 65536; break;
        case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *v = 32; break;
        case CU_DEVICE_ATTRIBUTE_MAX_PITCH: *v = 2147483647; break;
        case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: *v = 65536; break;
        case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: *v = 1980000; break;
        case CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT: *v = 512; break;
        case CU_DEVICE_ATTRIBUTE_GPU_OVERLAP: *v = 1; break;
        case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 132; break;
        case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY: *v = 1; break;
        case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS: *v = 1; break;
        case CU_DEVICE_ATTRIBUTE_ECC_ENABLED: *v = 1; break;
        case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: *v = 2619000; break;
        case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: *v = 6144; break;
        case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *v = 50 * 1024 * 1024; break;
        case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: *v = 2048; break;
        case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT: *v = 3; break;
        case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: *v = 1; break;
        case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 9; break;
        case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = 0; break;
        case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: *v = 233472; break;
        case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: *v = 65536; break;
        case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *v = 232448; break;
        case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: *v = 32; break;
        default: *v = 0; break;
    }
    return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------ contexts, streams, events, graphs */

static int handles[4096];          /* distinct non-null handles for opaque objects */
static int next_handle = 0;
static void *handle(void) { return &handles[(next_handle++) % 4096]; }

CUresult cuCtxCreate(CUcontext *c, CUctxCreateParams *p, unsigned int flags, CUdevice d) {
    (void) p; (void) flags; (void) d;
    *c = (CUcontext) handle();
    return CUDA_SUCCESS;
}
CUresult cuCtxDestroy(CUcontext c) { (void) c; return CUDA_SUCCESS; }
CUresult cuCtxSetCurrent(CUcontext c) { (void) c; return CUDA_SUCCESS; }
CUresult cuCtxSynchronize(void) { return CUDA_SUCCESS; }
CUresult cuCtxGetStreamPriorityRange(int *least, int *greatest) { *least = 0; *greatest = -5; return CUDA_SUCCESS; }

CUresult cuStreamCreate(CUstream *s, unsigned int flags) { (void) flags; *s = (CUstream) handle(); return CUDA_SUCCESS; }
CUresult cuStreamCreateWithPriority(CUstream *s, unsigned int flags, int prio) {
    (void) flags; (void) prio;
    *s = (CUstream) handle();
    return CUDA_SUCCESS;
}
CUresult cuStreamDestroy(CUstream s) { (void) s; return CUDA_SUCCESS; }
CUresult cuStreamSynchronize(CUstream s) { (void) s; return CUDA_SUCCESS; }
CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned int flags) { (void) s; (void) e; (void) flags; return CUDA_SUCCESS; }
CUresult cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus *st) { (void) s; *st = CU_STREAM_CAPTURE_STATUS_NONE; return CUDA_SUCCESS; }
CUresult cuStreamBeginCapture(CUstream s, CUstreamCaptureMode m) { (void) s; (void) m; return CUDA_SUCCESS; }
CUresult cuStreamEndCapture(CUstream s, CUgraph *g) { (void) s; *g = (CUgraph) handle(); return CUDA_SUCCESS; }
CUresult cuGraphInstantiateWithFlags(CUgraphExec *e, CUgraph g, unsigned long long flags) {
    (void) g; (void) flags;
    *e = (CUgraphExec) handle();
    return CUDA_SUCCESS;
}
CUresult cuGraphExecUpdate(CUgraphExec e, CUgraph g, CUgraphExecUpdateResultInfo *info) {
    (void) e; (void) g;
    if (info != NULL) memset(info, 0, sizeof *info);
    return CUDA_SUCCESS;
}
CUresult cuGraphLaunch(CUgraphExec e, CUstream s) { (void) e; (void) s; return CUDA_SUCCESS; }
CUresult cuGraphDestroy(CUgraph g) { (void) g; return CUDA_SUCCESS; }
CUresult cuGraphExecDestroy(CUgraphExec e) { (void) e; return CUDA_SUCCESS; }

CUresult cuEventCreate(CUevent *e, unsigned int flags) { (void) flags; *e = (CUevent) handle(); return CUDA_SUCCESS; }
CUresult cuEventDestroy(CUevent e) { (void) e; return CUDA_SUCCESS; }
CUresult cuEventRecord(CUevent e, CUstream s) { (void) e; (void) s; return CUDA_SUCCESS; }
CUresult cuEventQuery(CUevent e) { (void) e; return CUDA_SUCCESS; }
CUresult cuEventSynchronize(CUevent e) { (void) e; return CUDA_SUCCESS; }
CUresult cuEventElapsedTime(float *ms, CUevent a, CUevent b) { (void) a; (void) b; *ms = 0.001f; return CUDA_SUCCESS; }

CUresult cuGetErrorName(CUresult r, const char **s) { *s = r == CUDA_SUCCESS ? "CUDA_SUCCESS" : "CUDA_ERROR (stand-in)"; return CUDA_SUCCESS; }
CUresult cuGetErrorString(CUresult r, const char **s) { *s = r == CUDA_SUCCESS ? "no error" : "error (compile-gate stand-in)"; return CUDA_SUCCESS; }

/* ------------------------------------------------------------------ memory: host memory, reserved lazily */

CUresult cuMemGetInfo(size_t *free_b, size_t *total) { *free_b = H200_MEMORY - (1ull << 30); *total = H200_MEMORY; return CUDA_SUCCESS; }

static void *reserve(size_t n) {
    void *p = mmap(NULL, n == 0 ? 1 : n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

CUresult cuMemAlloc(CUdeviceptr *p, size_t n) {
    void *m = reserve(n);
    if (m == NULL) return CUDA_ERROR_OUT_OF_MEMORY;
    *p = (CUdeviceptr) m;
    return CUDA_SUCCESS;
}
CUresult cuMemFree(CUdeviceptr p) { (void) p; return CUDA_SUCCESS; }   /* sizes are not kept: leave the mapping */
CUresult cuMemAllocHost(void **p, size_t n) { *p = reserve(n); return *p == NULL ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_SUCCESS; }
CUresult cuMemFreeHost(void *p) { (void) p; return CUDA_SUCCESS; }
CUresult cuMemHostRegister(void *p, size_t n, unsigned int flags) { (void) p; (void) n; (void) flags; return CUDA_SUCCESS; }
CUresult cuMemHostUnregister(void *p) { (void) p; return CUDA_SUCCESS; }
/* copies move nothing: "device" pages never touched are never committed, so a run holding many plans' weights
 * costs no memory (copying them had a check run killed for memory on a 24 GB machine); results are not read.
 * STANDIN_CUDA_COPY=1 makes them real, for the small library-task check (CublasCheck.java) whose results are read. */
static int copies(void) {
    static int real = -1;
    if (real < 0) { const char *v = getenv("STANDIN_CUDA_COPY"); real = v != NULL && strcmp(v, "1") == 0; }
    return real;
}
CUresult cuMemcpyHtoDAsync(CUdeviceptr dst, const void *src, size_t n, CUstream s) { (void) s; if (copies()) memcpy((void *) dst, src, n); return CUDA_SUCCESS; }
CUresult cuMemcpyDtoHAsync(void *dst, CUdeviceptr src, size_t n, CUstream s) { (void) s; if (copies()) memcpy(dst, (const void *) src, n); return CUDA_SUCCESS; }
CUresult cuMemcpyDtoD(CUdeviceptr dst, CUdeviceptr src, size_t n) { if (copies()) memmove((void *) dst, (const void *) src, n); return CUDA_SUCCESS; }
CUresult cuMemsetD8(CUdeviceptr dst, unsigned char v, size_t n) { if (copies()) memset((void *) dst, v, n); return CUDA_SUCCESS; }

/* ------------------------------------------------------------------ modules: written to the dump, never run */

struct standin_module { int n; };                         /* the dump number of the module's text */
struct standin_function { char name[256]; int module; };

static const char CUBIN_MARK[] = "//standin-nvrtc: not a cubin; the gate compiles the dumped .cu with nvcc; module ";

static CUresult load_module(CUmodule *m, const void *image) {
    const char *text = (const char *) image;
    struct standin_module *mod = calloc(1, sizeof *mod);
    if (strncmp(text, CUBIN_MARK, sizeof CUBIN_MARK - 1) == 0) {
        mod->n = atoi(text + sizeof CUBIN_MARK - 1);          /* CUDA route: what the stand-in NVRTC returned */
    } else {
        mod->n = dump_counter++;                              /* PTX route: TornadoVM's PTX text */
        FILE *f = dump_open("ptx", mod->n);
        if (f != NULL) { fputs(text, f); fclose(f); }
    }
    *m = (CUmodule) mod;
    return CUDA_SUCCESS;
}
CUresult cuModuleLoadData(CUmodule *m, const void *image) { return load_module(m, image); }
CUresult cuModuleLoadDataEx(CUmodule *m, const void *image, unsigned int n, CUjit_option *o, void **v) {
    (void) o;
    /* the JIT options may ask for an info/error log: leave those buffers empty */
    for (unsigned int i = 0; i < n; i++) {
        if (o[i] == CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES || o[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES) v[i] = (void *) 0;
    }
    return load_module(m, image);
}
CUresult cuModuleUnload(CUmodule m) { (void) m; return CUDA_SUCCESS; }
CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name) {
    struct standin_function *fn = calloc(1, sizeof *fn);
    snprintf(fn->name, sizeof fn->name, "%s", name);
    fn->module = ((struct standin_module *) m)->n;
    *f = (CUfunction) fn;
    return CUDA_SUCCESS;
}
CUresult cuOccupancyMaxPotentialBlockSize(int *minGrid, int *block, CUfunction f, CUoccupancyB2DSize fn, size_t smem, int limit) {
    (void) f; (void) fn; (void) smem;
    *minGrid = 264;
    *block = limit > 0 && limit < 256 ? limit : 256;
    return CUDA_SUCCESS;
}
CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx, unsigned int by,
                        unsigned int bz, unsigned int smem, CUstream s, void **params, void **extra) {
    (void) s; (void) params; (void) extra;
    /* the launch shape, for the gate's occupancy column: name, grid, block, dynamic shared memory */
    const char *dir = getenv("STANDIN_CUDA_DUMP");
    if (dir != NULL && *dir != 0) {
        char path[4096];
        snprintf(path, sizeof path, "%s/launches.tsv", dir);
        FILE *log = fopen(path, "a");
        if (log != NULL) {
            struct standin_function *fn = (struct standin_function *) f;
            fprintf(log, "%d-%05d\t%s\t%u,%u,%u\t%u,%u,%u\t%u\n", (int) getpid(), fn->module, fn->name, gx, gy, gz, bx, by, bz, smem);
            fclose(log);
        }
    }
    return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------ NVRTC: records the program, compiles nothing */

typedef int nvrtcResult;           /* NVRTC_SUCCESS = 0 */
struct standin_program { char *src; char *name; int n; };
typedef struct standin_program *nvrtcProgram;


nvrtcResult nvrtcVersion(int *major, int *minor) { *major = 13; *minor = 0; return 0; }
nvrtcResult nvrtcGetNumSupportedArchs(int *n) { *n = 1; return 0; }
nvrtcResult nvrtcGetSupportedArchs(int *archs) { archs[0] = 90; return 0; }
const char *nvrtcGetErrorString(nvrtcResult r) { return r == 0 ? "NVRTC_SUCCESS" : "NVRTC_ERROR (stand-in)"; }

nvrtcResult nvrtcCreateProgram(nvrtcProgram *p, const char *src, const char *name, int numHeaders, const char *const *headers,
                               const char *const *includeNames) {
    (void) numHeaders; (void) headers; (void) includeNames;
    struct standin_program *q = calloc(1, sizeof *q);
    q->src = strdup(src);
    q->name = strdup(name == NULL ? "kernel.cu" : name);
    q->n = -1;
    *p = q;
    return 0;
}
nvrtcResult nvrtcCompileProgram(nvrtcProgram p, int numOptions, const char *const *options) {
    p->n = dump_counter++;
    FILE *f = dump_open("cu", p->n);
    if (f != NULL) { fputs(p->src, f); fclose(f); }
    f = dump_open("name", p->n);
    if (f != NULL) { fprintf(f, "%s\n", p->name); fclose(f); }
    f = dump_open("opts", p->n);
    if (f != NULL) {
        for (int i = 0; i < numOptions; i++) fprintf(f, "%s\n", options[i]);
        fclose(f);
    }
    return 0;
}
nvrtcResult nvrtcGetProgramLogSize(nvrtcProgram p, size_t *n) { (void) p; *n = 1; return 0; }
nvrtcResult nvrtcGetProgramLog(nvrtcProgram p, char *log) { (void) p; log[0] = 0; return 0; }
/* the "binary" handed back names the dump number, so that cuModuleLoadData can tag the module's launches */
nvrtcResult nvrtcGetCUBINSize(nvrtcProgram p, size_t *n) { (void) p; *n = sizeof CUBIN_MARK + 8; return 0; }
nvrtcResult nvrtcGetCUBIN(nvrtcProgram p, char *out) { snprintf(out, sizeof CUBIN_MARK + 8, "%s%05d\n", CUBIN_MARK, p->n); return 0; }
nvrtcResult nvrtcGetPTXSize(nvrtcProgram p, size_t *n) { (void) p; *n = sizeof CUBIN_MARK + 8; return 0; }
nvrtcResult nvrtcGetPTX(nvrtcProgram p, char *out) { snprintf(out, sizeof CUBIN_MARK + 8, "%s%05d\n", CUBIN_MARK, p->n); return 0; }
nvrtcResult nvrtcDestroyProgram(nvrtcProgram *p) {
    if (p != NULL && *p != NULL) { free((*p)->src); free((*p)->name); free(*p); *p = NULL; }
    return 0;
}
