/*
 * tools/gpu/gate/standin_cublas.c — a stand-in for cuBLAS (libcublas.so.13) and cuBLASLt (libcublasLt.so.13), used
 * only by the compile gate and its library-task check, never shipped.
 *
 * TornadoVM's cuBLAS bindings (libtornado-cublas.so) need both libraries to load. On a build machine with no GPU
 * this file answers the calls the project's graphs make: every SGEMM is appended to $STANDIN_CUDA_DUMP/cublas.tsv
 * (function, transa, transb, m, n, k, lda, ldb, ldc, strides, batch), and, where the driver stand-in's copies are
 * real (STANDIN_CUDA_COPY=1), computed on the host as cuBLAS defines it: column-major, element (i, j) of a matrix at
 * i + j·ld, C[b] = α·op(A[b])·op(B[b]) + β·C[b] with X[b] at X + b·strideX. Anything else answers "not supported".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int cublasStatus_t;             /* CUBLAS_STATUS_SUCCESS = 0, CUBLAS_STATUS_NOT_SUPPORTED = 15 */
typedef void *cublasHandle_t;
enum { OK = 0, NOT_SUPPORTED = 15, OP_N = 0, OP_T = 1 };

static char handles[64];
static int next_handle = 0;

cublasStatus_t cublasCreate_v2(cublasHandle_t *h) { *h = &handles[(next_handle++) % 64]; return OK; }
cublasStatus_t cublasDestroy_v2(cublasHandle_t h) { (void) h; return OK; }
cublasStatus_t cublasSetStream_v2(cublasHandle_t h, void *stream) { (void) h; (void) stream; return OK; }
cublasStatus_t cublasSetMathMode(cublasHandle_t h, int mode) { (void) h; (void) mode; return OK; }
cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t h, void *w, size_t n) { (void) h; (void) w; (void) n; return OK; }

static int computes(void) {
    const char *v = getenv("STANDIN_CUDA_COPY");
    return v != NULL && strcmp(v, "1") == 0;
}

static void record(const char *fn, int ta, int tb, int m, int n, int k, int lda, int ldb, int ldc,
                   long long sa, long long sb, long long sc, int batch) {
    const char *dir = getenv("STANDIN_CUDA_DUMP");
    if (dir == NULL || *dir == 0) return;
    char path[4096];
    snprintf(path, sizeof path, "%s/cublas.tsv", dir);
    FILE *f = fopen(path, "a");
    if (f == NULL) return;
    fprintf(f, "%d\t%s\t%d,%d\t%d,%d,%d\t%d,%d,%d\t%lld,%lld,%lld\t%d\n", (int) getpid(), fn, ta, tb, m, n, k, lda, ldb, ldc,
            sa, sb, sc, batch);
    fclose(f);
}

static cublasStatus_t gemm(int ta, int tb, int m, int n, int k, const float *alpha, const float *a, int lda,
                           long long sa, const float *b, int ldb, long long sb, const float *beta, float *c, int ldc,
                           long long sc, int batch) {
    if ((ta != OP_N && ta != OP_T) || (tb != OP_N && tb != OP_T) || m < 0 || n < 0 || k < 0 || batch < 0) return 7;  /* INVALID_VALUE */
    if (lda < (ta == OP_N ? m : k) || ldb < (tb == OP_N ? k : n) || ldc < m) return 7;
    if (!computes()) return OK;
    for (int q = 0; q < batch; q++) {
        const float *A = a + q * sa, *B = b + q * sb;
        float *C = c + q * sc;
        for (int j = 0; j < n; j++) {
            for (int i = 0; i < m; i++) {
                double s = 0;
                for (int p = 0; p < k; p++) {
                    double av = ta == OP_N ? A[i + (long long) p * lda] : A[p + (long long) i * lda];
                    double bv = tb == OP_N ? B[p + (long long) j * ldb] : B[j + (long long) p * ldb];
                    s += av * bv;
                }
                double old = *beta == 0 ? 0 : *beta * C[i + (long long) j * ldc];   /* beta 0: C is not read (it may be NaN) */
                C[i + (long long) j * ldc] = (float) (*alpha * s + old);
            }
        }
    }
    return OK;
}

cublasStatus_t cublasSgemm_v2(cublasHandle_t h, int ta, int tb, int m, int n, int k, const float *alpha, const float *a, int lda,
                              const float *b, int ldb, const float *beta, float *c, int ldc) {
    (void) h;
    record("cublasSgemm", ta, tb, m, n, k, lda, ldb, ldc, 0, 0, 0, 1);
    return gemm(ta, tb, m, n, k, alpha, a, lda, 0, b, ldb, 0, beta, c, ldc, 0, 1);
}

cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t h, int ta, int tb, int m, int n, int k, const float *alpha,
                                         const float *a, int lda, long long sa, const float *b, int ldb, long long sb,
                                         const float *beta, float *c, int ldc, long long sc, int batch) {
    (void) h;
    record("cublasSgemmStridedBatched", ta, tb, m, n, k, lda, ldb, ldc, sa, sb, sc, batch);
    return gemm(ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c, ldc, sc, batch);
}

/* not used by the project's graphs: refused, so a graph that starts to use one fails here, loudly */
cublasStatus_t cublasSgemv_v2(void) { return NOT_SUPPORTED; }
cublasStatus_t cublasGemmEx(void) { return NOT_SUPPORTED; }
cublasStatus_t cublasLtCreate(void **h) { *h = &handles[(next_handle++) % 64]; return OK; }
cublasStatus_t cublasLtDestroy(void *h) { (void) h; return OK; }
cublasStatus_t cublasLtMatmul(void) { return NOT_SUPPORTED; }
cublasStatus_t cublasLtMatmulDescCreate(void) { return NOT_SUPPORTED; }
cublasStatus_t cublasLtMatmulDescDestroy(void) { return OK; }
cublasStatus_t cublasLtMatmulDescSetAttribute(void) { return NOT_SUPPORTED; }
cublasStatus_t cublasLtMatrixLayoutCreate(void) { return NOT_SUPPORTED; }
cublasStatus_t cublasLtMatrixLayoutDestroy(void) { return OK; }
cublasStatus_t cublasLtMatmulPreferenceCreate(void) { return NOT_SUPPORTED; }
cublasStatus_t cublasLtMatmulPreferenceDestroy(void) { return OK; }
cublasStatus_t cublasLtMatmulPreferenceSetAttribute(void) { return NOT_SUPPORTED; }
cublasStatus_t cublasLtMatmulAlgoGetHeuristic(void) { return NOT_SUPPORTED; }
