// CUB's device-wide algorithms for the parity benchmark's reference rows:
// sum, 256-bin histogram of bytes and exclusive scan of `unsigned`, each as
// a C function of a shared library the benchmark builds with
// `nvcc -O3 -arch=sm_90 -shared -Xcompiler -fPIC` and loads at run time.
// Each takes its temporary storage from the caller (size it with the
// `_temp_bytes` function first), so the timed call is the algorithm alone.
// Returns the cudaError_t of the call (0 on success).

#include <cub/cub.cuh>

extern "C" size_t parity_cub_sum_temp_bytes(int n) {
    size_t bytes = 0;
    cub::DeviceReduce::Sum(nullptr, bytes, (const unsigned*)nullptr, (unsigned*)nullptr, n);
    return bytes;
}

extern "C" int parity_cub_sum(void* temp, size_t bytes, const unsigned* in, unsigned* out, int n,
                              cudaStream_t stream) {
    return (int)cub::DeviceReduce::Sum(temp, bytes, in, out, n, stream);
}

extern "C" size_t parity_cub_histogram_temp_bytes(int n) {
    size_t bytes = 0;
    cub::DeviceHistogram::HistogramEven(nullptr, bytes, (const unsigned char*)nullptr,
                                        (unsigned*)nullptr, 257, 0, 256, n);
    return bytes;
}

extern "C" int parity_cub_histogram(void* temp, size_t bytes, const unsigned char* in,
                                    unsigned* bins, int n, cudaStream_t stream) {
    return (int)cub::DeviceHistogram::HistogramEven(temp, bytes, in, bins, 257, 0, 256, n, stream);
}

extern "C" size_t parity_cub_scan_temp_bytes(int n) {
    size_t bytes = 0;
    cub::DeviceScan::ExclusiveSum(nullptr, bytes, (const unsigned*)nullptr, (unsigned*)nullptr, n);
    return bytes;
}

extern "C" int parity_cub_scan(void* temp, size_t bytes, const unsigned* in, unsigned* out, int n,
                               cudaStream_t stream) {
    return (int)cub::DeviceScan::ExclusiveSum(temp, bytes, in, out, n, stream);
}
