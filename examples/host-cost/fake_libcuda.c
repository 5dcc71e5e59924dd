/* A CPU-only stand-in for libcuda, for `examples/host-cost/run`: every call
 * cuda-mem makes on its launch, fill, pool and graph paths succeeds at once and does
 * no GPU work, so the host instructions around the driver can be counted
 * (callgrind) on a machine without a GPU. Not a simulator: device memory is
 * never touched and kernels never run. Its one piece of bookkeeping is the
 * `.b8` globals of a loaded PTX module (`.global .align 8 .b8 NAME[N] = {..}`),
 * which `cuModuleGetGlobal` and `cuMemcpyDtoH` hand back, so that cuda-mem's
 * check of a kernel's fingerprint and parameter table sees the PTX's own. */
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
typedef int CUresult;
typedef int CUdevice;
typedef void *P;
static char ctx_obj[64], pool_obj[64], fn_obj[64];
/* The last global handed out by cuModuleGetGlobal, readable by cuMemcpyDtoH. */
static unsigned char global_value[4096];
static size_t global_size;
static __thread P current;
static uint64_t next_addr = 0x7f0000000000ull;
CUresult cuInit(unsigned f) { return 0; }
CUresult cuDriverGetVersion(int *v) { *v = 12080; return 0; }
CUresult cuDeviceGetCount(int *n) { *n = 1; return 0; }
CUresult cuDeviceGet(CUdevice *d, int o) { *d = o; return 0; }
CUresult cuDeviceGetName(char *n, int len, CUdevice d) { strncpy(n, "fake", len); return 0; }
CUresult cuDeviceTotalMem_v2(size_t *b, CUdevice d) { *b = 1ull << 37; return 0; }
CUresult cuDeviceGetAttribute(int *v, int a, CUdevice d) {
  switch (a) {
  case 16: *v = 132; break;            /* multiprocessors */
  case 1: *v = 1024; break; case 5: *v = 0x7fffffff; break; case 6: case 7: *v = 65535; break;
  case 39: *v = 2048; break;           /* max threads per SM */
  case 75: *v = 9; break; case 76: *v = 0; break; /* compute capability */
  default: *v = 1;
  }
  return 0;
}
CUresult cuDevicePrimaryCtxRetain(P *c, CUdevice d) { *c = ctx_obj; return 0; }
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) { return 0; }
CUresult cuDevicePrimaryCtxGetState(CUdevice d, unsigned *f, int *a) { *f = 0; *a = 1; return 0; }
CUresult cuCtxGetCurrent(P *c) { *c = current; return 0; }
CUresult cuCtxSetCurrent(P c) { current = c; return 0; }
CUresult cuCtxPushCurrent_v2(P c) { current = c; return 0; }
CUresult cuCtxPopCurrent_v2(P *c) { *c = current; return 0; }
CUresult cuCtxGetDevice(CUdevice *d) { *d = 0; return 0; }
CUresult cuCtxSynchronize(void) { return 0; }
CUresult cuCtxGetFlags(unsigned *f) { *f = 0; return 0; }
CUresult cuCtxSetFlags(unsigned f) { return 0; }
/* A stream is 16 bytes whose first int says whether it is capturing. */
CUresult cuStreamCreate(P *s, unsigned f) { *s = calloc(1, 16); return 0; }
CUresult cuStreamCreateWithPriority(P *s, unsigned f, int p) { *s = calloc(1, 16); return 0; }
CUresult cuStreamDestroy_v2(P s) { free(s); return 0; }
CUresult cuStreamSynchronize(P s) { return 0; }
CUresult cuStreamQuery(P s) { return 0; }
static int capturing(P s) { return (uintptr_t)s > 2 ? *(int *)s : 0; }
CUresult cuStreamIsCapturing(P s, int *st) { *st = capturing(s); return 0; }
/* Captures: one graph, one executable, and the last node recorded is a
 * memset of the element size of the last memset call. */
static char graph_obj[64], exec_obj[64], node_obj[64];
static P last_nodes[1] = {node_obj};
static unsigned last_memset_size = 4;
CUresult cuStreamBeginCapture_v2(P s, int mode) { *(int *)s = 1; return 0; }
CUresult cuStreamEndCapture(P s, P *g) { *(int *)s = 0; *g = graph_obj; return 0; }
CUresult cuStreamGetCaptureInfo_v2(P s, int *st, uint64_t *id, P *g, P **deps, size_t *n) {
  *st = capturing(s);
  if (*st) {
    if (id) *id = 1;
    if (g) *g = graph_obj;
    if (deps) *deps = last_nodes;
    if (n) *n = 1;
  }
  return 0;
}
CUresult cuGraphInstantiateWithFlags(P *e, P g, unsigned long long f) { *e = exec_obj; return 0; }
CUresult cuGraphLaunch(P e, P s) { return 0; }
CUresult cuGraphDestroy(P g) { return 0; }
CUresult cuGraphExecDestroy(P e) { return 0; }
CUresult cuDeviceGraphMemTrim(CUdevice d) { return 0; }
typedef struct { uint64_t dst; size_t pitch; unsigned value, element_size; size_t width, height; } MemsetParams;
CUresult cuGraphMemsetNodeGetParams(P node, MemsetParams *p) {
  memset(p, 0, sizeof *p);
  p->element_size = last_memset_size;
  return 0;
}
CUresult cuGraphExecMemsetNodeSetParams(P e, P node, const MemsetParams *p, P ctx) { return 0; }
CUresult cuStreamWaitEvent(P s, P e, unsigned f) { return 0; }
CUresult cuStreamGetCtx(P s, P *c) { *c = ctx_obj; return 0; }
CUresult cuEventCreate(P *e, unsigned f) { *e = malloc(16); return 0; }
CUresult cuEventDestroy_v2(P e) { free(e); return 0; }
CUresult cuEventRecord(P e, P s) { return 0; }
CUresult cuEventRecordWithFlags(P e, P s, unsigned f) { return 0; }
CUresult cuEventQuery(P e) { return 0; }
CUresult cuEventSynchronize(P e) { return 0; }
CUresult cuEventElapsedTime(float *ms, P a, P b) { *ms = 0; return 0; }
CUresult cuMemGetInfo_v2(size_t *f, size_t *t) { *f = *t = 1ull << 37; return 0; }
CUresult cuMemAlloc_v2(uint64_t *p, size_t b) { *p = next_addr; next_addr += (b + 0xfff) & ~0xfffull; return 0; }
CUresult cuMemFree_v2(uint64_t p) { return 0; }
CUresult cuMemAllocAsync(uint64_t *p, size_t b, P s) { *p = 0x7e0000000000ull; return 0; }
CUresult cuMemAllocFromPoolAsync(uint64_t *p, size_t b, P pool, P s) { *p = 0x7e0000000000ull; return 0; }
CUresult cuMemFreeAsync(uint64_t p, P s) { return 0; }
CUresult cuDeviceGetDefaultMemPool(P *p, CUdevice d) { *p = pool_obj; return 0; }
CUresult cuDeviceGetMemPool(P *p, CUdevice d) { *p = pool_obj; return 0; }
CUresult cuMemPoolSetAttribute(P p, int a, void *v) { return 0; }
CUresult cuMemPoolGetAttribute(P p, int a, void *v) { memset(v, 0, 8); return 0; }
CUresult cuMemPoolTrimTo(P p, size_t k) { return 0; }
CUresult cuMemsetD8Async(uint64_t d, unsigned char v, size_t n, P s) { last_memset_size = 1; return 0; }
CUresult cuMemsetD16Async(uint64_t d, unsigned short v, size_t n, P s) { last_memset_size = 2; return 0; }
CUresult cuMemsetD32Async(uint64_t d, unsigned v, size_t n, P s) { last_memset_size = 4; return 0; }
CUresult cuMemcpyAsync(uint64_t d, uint64_t s_, size_t n, P s) { return 0; }
CUresult cuMemcpyHtoDAsync_v2(uint64_t d, const void *h, size_t n, P s) { return 0; }
CUresult cuMemcpyDtoHAsync_v2(void *h, uint64_t d, size_t n, P s) { return 0; }
CUresult cuMemcpyDtoH_v2(void *h, uint64_t d, size_t n) {
  if (d == (uint64_t)(uintptr_t)global_value && n <= global_size) memcpy(h, global_value, n);
  return 0;
}
CUresult cuMemcpyDtoDAsync_v2(uint64_t d, uint64_t s_, size_t n, P s) { return 0; }
/* A module is a copy of its PTX text. */
CUresult cuModuleLoadData(P *m, const void *img) { *m = strdup((const char *)img); return 0; }
CUresult cuModuleUnload(P m) { free(m); return 0; }
CUresult cuModuleGetFunction(P *f, P m, const char *name) { *f = fn_obj; return 0; }
CUresult cuModuleGetGlobal_v2(uint64_t *d, size_t *b, P m, const char *name) {
  char key[512];
  snprintf(key, sizeof key, " %s[", name);
  const char *at = strstr((const char *)m, key);
  if (!at) return 500; /* CUDA_ERROR_NOT_FOUND */
  at += strlen(key);
  char *end;
  size_t size = strtoul(at, &end, 10);
  if (size > sizeof global_value) return 1; /* CUDA_ERROR_INVALID_VALUE */
  memset(global_value, 0, sizeof global_value);
  at = strchr(end, '{');
  const char *close = at ? strchr(at, '}') : NULL;
  /* The initializer's bytes; PTX may leave out trailing zeros. */
  for (size_t i = 0; at && at < close && i < size; i++) {
    global_value[i] = (unsigned char)strtoul(at + 1, &end, 10);
    at = strchr(end, ',');
    if (!at || at > close) break;
  }
  global_size = size;
  *d = (uint64_t)(uintptr_t)global_value;
  *b = size;
  return 0;
}
CUresult cuFuncGetAttribute(int *v, int a, P f) { *v = 0; return 0; }
CUresult cuFuncSetAttribute(P f, int a, int v) { return 0; }
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, P f, int bs, size_t sm) { *n = 8; return 0; }
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *n, P f, int bs, size_t sm, unsigned fl) { *n = 8; return 0; }
CUresult cuLaunchKernel(P f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned sm, P s, void **params, void **extra) { return 0; }
CUresult cuPointerGetAttribute(void *d, int a, uint64_t p) { memset(d, 0, 8); return 0; }
CUresult cuGetErrorString(CUresult e, const char **s) { *s = "fake"; return 0; }
CUresult cuGetErrorName(CUresult e, const char **s) { *s = "FAKE"; return 0; }
