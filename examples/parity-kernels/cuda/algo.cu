// CUB's and Thrust's device-wide algorithms for the `algo` rows of the
// benchmark (cuda_mem::algo against them), as C functions of a shared
// library the benchmark builds with `nvcc -O3 -arch=sm_XX -shared
// -Xcompiler -fPIC` and loads at run time. `which` picks the algorithm:
//   0: sum of u32            (cub::DeviceReduce::Sum,        thrust::reduce)
//   1: max of f32            (cub::DeviceReduce::Max,        thrust::reduce, thrust::maximum)
//   2: exclusive sum of u32  (cub::DeviceScan::ExclusiveSum, thrust::exclusive_scan)
//   3: inclusive sum of f32  (cub::DeviceScan::InclusiveSum, thrust::inclusive_scan)
//   4: 256-bin histogram of u8 (cub::DeviceHistogram::HistogramEven; Thrust
//      has none)
//   5: 1024-bin histogram of f32 over [0, 1) (HistogramEven likewise)
// and the radix sorts of u32 keys and of (u32, u32) pairs, ascending
// (`algo_cub_sort` / `algo_thrust_sort`: cub::DeviceRadixSort::SortKeys /
// SortPairs from one buffer into another, thrust::sort / sort_by_key in
// place; `values` null: keys alone).
// CUB takes its temporary storage from the caller (size it with
// `algo_cub_temp_bytes` first), so the timed call is the algorithm alone;
// Thrust allocates its own, as a Thrust user's call does. The reductions
// write their result to `out` (device memory): Thrust's `reduce` returns it
// to the host, so its function copies it back to `out`. Each returns the
// cudaError_t of the call (0 on success).

#include <cub/cub.cuh>
#include <thrust/execution_policy.h>
#include <thrust/functional.h>
#include <thrust/reduce.h>
#include <thrust/scan.h>
#include <thrust/sort.h>

#include <cfloat>

static cudaError_t cub_call(int which, void* temp, size_t& bytes, const void* in, void* out, int n,
                            cudaStream_t s) {
    switch (which) {
    case 0:
        return cub::DeviceReduce::Sum(temp, bytes, (const unsigned*)in, (unsigned*)out, n, s);
    case 1:
        return cub::DeviceReduce::Max(temp, bytes, (const float*)in, (float*)out, n, s);
    case 2:
        return cub::DeviceScan::ExclusiveSum(temp, bytes, (const unsigned*)in, (unsigned*)out, n, s);
    case 3:
        return cub::DeviceScan::InclusiveSum(temp, bytes, (const float*)in, (float*)out, n, s);
    case 4:
        return cub::DeviceHistogram::HistogramEven(temp, bytes, (const unsigned char*)in,
                                                   (unsigned*)out, 257, 0, 256, n, s);
    case 5:
        return cub::DeviceHistogram::HistogramEven(temp, bytes, (const float*)in, (unsigned*)out,
                                                   1025, 0.0f, 1.0f, n, s);
    default:
        return cudaErrorInvalidValue;
    }
}

extern "C" size_t algo_cub_temp_bytes(int which, int n) {
    size_t bytes = 0;
    cub_call(which, nullptr, bytes, nullptr, nullptr, n, 0);
    return bytes;
}

extern "C" int algo_cub(int which, void* temp, size_t bytes, const void* in, void* out, int n,
                        cudaStream_t s) {
    return (int)cub_call(which, temp, bytes, in, out, n, s);
}

extern "C" int algo_thrust(int which, const void* in, void* out, int n, cudaStream_t s) {
    auto policy = thrust::cuda::par.on(s);
    switch (which) {
    case 0: {
        const unsigned* p = (const unsigned*)in;
        unsigned total = thrust::reduce(policy, p, p + n, 0u);
        return (int)cudaMemcpyAsync(out, &total, sizeof total, cudaMemcpyHostToDevice, s);
    }
    case 1: {
        const float* p = (const float*)in;
        float top = thrust::reduce(policy, p, p + n, -FLT_MAX, thrust::maximum<float>());
        return (int)cudaMemcpyAsync(out, &top, sizeof top, cudaMemcpyHostToDevice, s);
    }
    case 2: {
        const unsigned* p = (const unsigned*)in;
        thrust::exclusive_scan(policy, p, p + n, (unsigned*)out);
        return (int)cudaGetLastError();
    }
    case 3: {
        const float* p = (const float*)in;
        thrust::inclusive_scan(policy, p, p + n, (float*)out);
        return (int)cudaGetLastError();
    }
    default:
        return (int)cudaErrorInvalidValue;
    }
}

extern "C" size_t algo_cub_sort_temp_bytes(int pairs, int n) {
    size_t bytes = 0;
    if (pairs) {
        cub::DeviceRadixSort::SortPairs(nullptr, bytes, (const unsigned*)nullptr, (unsigned*)nullptr,
                                        (const unsigned*)nullptr, (unsigned*)nullptr, n);
    } else {
        cub::DeviceRadixSort::SortKeys(nullptr, bytes, (const unsigned*)nullptr, (unsigned*)nullptr, n);
    }
    return bytes;
}

extern "C" int algo_cub_sort(void* temp, size_t bytes, const unsigned* keys_in, unsigned* keys_out,
                             const unsigned* values_in, unsigned* values_out, int n, cudaStream_t s) {
    if (values_in) {
        return (int)cub::DeviceRadixSort::SortPairs(temp, bytes, keys_in, keys_out, values_in,
                                                    values_out, n, 0, 32, s);
    }
    return (int)cub::DeviceRadixSort::SortKeys(temp, bytes, keys_in, keys_out, n, 0, 32, s);
}

extern "C" int algo_thrust_sort(unsigned* keys, unsigned* values, int n, cudaStream_t s) {
    auto policy = thrust::cuda::par.on(s);
    if (values) {
        thrust::sort_by_key(policy, keys, keys + n, values);
    } else {
        thrust::sort(policy, keys, keys + n);
    }
    return (int)cudaGetLastError();
}
