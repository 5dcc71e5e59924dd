// The host cost of single driver calls on a real GPU: the calls cuda-mem adds
// around an operation (the capture query, the context check), next to the
// operations themselves. Each row is the median of 15 batches of 1000 calls
// on one stream (the stream synchronised between batches, so the launch queue
// never fills), in nanoseconds per call; two rounds, to show the noise.
//
// On a machine with a GPU and nvcc (the driver API alone, no runtime):
//
//     nvcc -O2 -x cu examples/host-cost/driver_calls.c -lcuda -o /tmp/driver_calls
//     /tmp/driver_calls
//
// `examples/host-cost/run` counts cuda-mem's own instructions without a GPU;
// this program times the driver calls that count cannot see.
#include <cuda.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#define CHECK(call)                                                   \
    do {                                                              \
        CUresult r_ = (call);                                         \
        if (r_ != CUDA_SUCCESS) {                                     \
            fprintf(stderr, "driver_calls: %s failed: %d\n", #call, r_); \
            exit(1);                                                  \
        }                                                             \
    } while (0)

#define REPS 15
#define CALLS 1000

// Times `body` (one call, or a few) as described above and prints the row.
#define ROW(name, body)                                              \
    do {                                                             \
        double v[REPS];                                              \
        for (int rep = -2; rep < REPS; rep++) {                      \
            double t = now_ns();                                     \
            for (int i = 0; i < CALLS; i++) {                        \
                body;                                                \
            }                                                        \
            double per_call = (now_ns() - t) / CALLS;                \
            CHECK(cuStreamSynchronize(stream));                      \
            if (rep >= 0) v[rep] = per_call;                         \
        }                                                            \
        qsort(v, REPS, sizeof v[0], by_value);                       \
        printf("%-52s %8.1f ns\n", name, v[REPS / 2]);               \
    } while (0)

int main(void) {
    CUdevice dev;
    CUcontext ctx, current;
    CUstream stream;
    CUdeviceptr words;
    CUevent event;
    CUstreamCaptureStatus status;
    unsigned long long id;
    pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    CHECK(cuMemAlloc(&words, 1 << 20));
    CHECK(cuEventCreate(&event, CU_EVENT_DISABLE_TIMING));
    for (int round = 1; round <= 2; round++) {
        printf("round %d\n", round);
        ROW("cuMemsetD32Async, 4 KiB", cuMemsetD32Async(words, 7, 1024, stream));
        ROW("cuStreamIsCapturing (the capture query)", cuStreamIsCapturing(stream, &status));
        ROW("cuCtxGetCurrent (the context check)", cuCtxGetCurrent(&current));
        ROW("cuCtxSetCurrent, the current context", cuCtxSetCurrent(ctx));
        ROW("cuStreamGetCtx", cuStreamGetCtx(stream, &current));
        ROW("cuStreamGetId", cuStreamGetId(stream, &id));
        ROW("pthread mutex lock + unlock (uncontended)",
            { pthread_mutex_lock(&mutex); pthread_mutex_unlock(&mutex); });
        ROW("cuMemsetD32Async + cuCtxGetCurrent + IsCapturing", {
            cuCtxGetCurrent(&current);
            cuStreamIsCapturing(stream, &status);
            cuMemsetD32Async(words, 7, 1024, stream);
        });
        ROW("cuMemAllocAsync + cuMemFreeAsync, 1 MiB", {
            CUdeviceptr p;
            cuMemAllocAsync(&p, 1 << 20, stream);
            cuMemFreeAsync(p, stream);
        });
        ROW("cuEventRecord", cuEventRecord(event, stream));
    }
    CHECK(cuEventDestroy(event));
    CHECK(cuMemFree(words));
    CHECK(cuStreamDestroy(stream));
    CHECK(cuDevicePrimaryCtxRelease(dev));
    return 0;
}
